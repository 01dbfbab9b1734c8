// The global dictation shortcut in the real window: X key events (xdotool, through the X
// server's XTEST, as a keyboard would) start and stop a dictation while the window is in the
// background; the Record button shows the same state. Then hold-to-talk: the dictation lasts as
// long as the keys are held.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { application, fifoMicrophone, launch, screenshot, speechRaw, tempDir, waitForLiveText } from "./fixtures.mjs";

let mic;
let home;

before(() => {
  assert.ok(fs.existsSync(application), `build the app first: ${application}`);
  home = tempDir("umwelt-e2e-shortcut-");
  mic = fifoMicrophone(home, speechRaw(home, "remember to buy milk"));
});
after(() => mic?.stop());

/** Press (or hold, or let go of) keys as the X server's keyboard would. */
function keys(action, combo) {
  execFileSync("xdotool", [action, "--clearmodifiers", combo]);
}

async function phase(browser) {
  return (await browser.$("#record")).getAttribute("data-phase");
}

async function withApp(settings, body) {
  const data = path.join(home, `data-${settings.shortcut_mode}`);
  fs.mkdirSync(data, { recursive: true });
  fs.writeFileSync(path.join(data, "settings.json"), JSON.stringify(settings));
  const app = await launch(application, { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: data });
  try {
    await (await app.browser.$("#record")).waitForClickable({ timeout: 30_000 });
    await body(app.browser);
  } finally {
    await app.close();
  }
}

test("the global shortcut starts and stops a dictation, and the button shows it", { timeout: 180_000 }, async () => {
  await withApp({ shortcut: "Ctrl+Alt+Space", shortcut_mode: "toggle" }, async (browser) => {
    keys("key", "ctrl+alt+space");
    await browser.waitUntil(async () => (await phase(browser)) === "listening", {
      timeout: 30_000,
      timeoutMsg: "the shortcut did not start a dictation",
    });
    await waitForLiveText(browser, /milk/i, 30_000);
    keys("key", "ctrl+alt+space");
    const textarea = await browser.$("#drafts .draft textarea");
    await textarea.waitForDisplayed({ timeout: 60_000, timeoutMsg: "the second press did not stop it into a draft" });
    assert.match(await textarea.getValue(), /milk/i);
    assert.notEqual(await phase(browser), "listening");
    await screenshot(browser, "shortcut-toggle.png");
  });
});

test("hold-to-talk records while the keys are held and stops when they are let go", { timeout: 180_000 }, async () => {
  await withApp({ shortcut: "Ctrl+Alt+Space", shortcut_mode: "push_to_talk" }, async (browser) => {
    keys("keydown", "ctrl+alt+space");
    try {
      await browser.waitUntil(async () => (await phase(browser)) === "listening", {
        timeout: 30_000,
        timeoutMsg: "holding the shortcut did not start a dictation",
      });
      await waitForLiveText(browser, /milk/i, 30_000);
      assert.equal(await phase(browser), "listening", "still recording while held");
    } finally {
      keys("keyup", "ctrl+alt+space");
    }
    const textarea = await browser.$("#drafts .draft textarea");
    await textarea.waitForDisplayed({ timeout: 60_000, timeoutMsg: "letting go did not stop it into a draft" });
    assert.match(await textarea.getValue(), /milk/i);
    await screenshot(browser, "shortcut-hold.png");
  });
});
