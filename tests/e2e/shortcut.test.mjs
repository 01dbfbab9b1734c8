// The global dictation shortcut in the real window: X key events (xdotool, through the X
// server's XTEST, as a keyboard would) start and stop a dictation while the window is in the
// background; the Record button shows the same state. Then hold-to-talk: the dictation lasts as
// long as the keys are held. Then Settings → After dictation: the shortcut's dictation is saved
// and typed into another real X11 app (xterm) that has the focus; with no window focused it goes
// to the clipboard (read back with xclip) and a desktop notification says so (seen on the
// session bus with dbus-monitor).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
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

/**
 * Press (or hold, or let go of) keys as the X server's keyboard would. A press clears the
 * modifiers held before it and puts them back after; holding and letting go must not (letting go
 * of Ctrl+Alt+Space with them cleared would put Ctrl and Alt back down, held for good).
 */
function keys(action, combo) {
  execFileSync("xdotool", action === "key" ? [action, "--clearmodifiers", combo] : [action, combo]);
}

async function phase(browser) {
  return (await browser.$("#record")).getAttribute("data-phase");
}

async function withApp(settings, body, name = settings.shortcut_mode) {
  const data = path.join(home, `data-${name}`);
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
    await dictateWithTheShortcut(browser);
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

/** Run xdotool; its output, or null when it fails. */
function xdotool(...args) {
  try {
    return execFileSync("xdotool", args, { stdio: ["ignore", "pipe", "ignore"] }).toString();
  } catch {
    return null;
  }
}

async function until(ready, what, timeout = 60_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await ready();
    if (value) return value;
    assert.ok(Date.now() < end, `waited ${timeout / 1000} s for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An xterm writing what is typed into it to `file`, with the keyboard focus, as a click gives it. */
async function focusedXterm(file) {
  const term = spawn("xterm", ["-e", `cat > '${file}'`], {
    env: { ...process.env, LC_ALL: "C.UTF-8" },
    stdio: "ignore",
  });
  const window = await until(
    () => xdotool("search", "--onlyvisible", "--pid", String(term.pid))?.trim().split("\n")[0],
    "xterm's window",
  );
  await until(
    () => xdotool("windowfocus", "--sync", window) !== null && xdotool("getwindowfocus")?.trim() === window,
    "xterm to take the focus",
  );
  return { term, window };
}

/** A dictation started and stopped with the shortcut, the window in the background. */
async function dictateWithTheShortcut(browser) {
  keys("key", "ctrl+alt+space");
  await browser.waitUntil(async () => (await phase(browser)) === "listening", {
    timeout: 30_000,
    timeoutMsg: "the shortcut did not start a dictation",
  });
  await waitForLiveText(browser, /milk/i, 30_000);
  keys("key", "ctrl+alt+space");
}

test("After dictation: the shortcut's dictation is saved, then typed into the focused app", { timeout: 180_000 }, async () => {
  const settings = { shortcut: "Ctrl+Alt+Space", shortcut_mode: "toggle", after_dictation: "type_and_save" };
  await withApp(
    settings,
    async (browser) => {
      const out = path.join(home, "typed.txt");
      const { term } = await focusedXterm(out);
      try {
        await dictateWithTheShortcut(browser);
        // Saved as a memory: it is in the list, and no draft waits.
        const saved = await until(async () => {
          const listed = await browser.execute(() => Array.from(document.querySelectorAll("#memories .memory .text"), (e) => e.textContent ?? ""));
          return listed.find((t) => /milk/i.test(t));
        }, "the dictation to be listed as a memory");
        assert.equal((await browser.$$("#drafts .draft")).length, 0, "no draft is left: it was saved");
        // Typed into xterm: cat writes the line once Return ends it.
        xdotool("key", "Return");
        const typed = await until(() => {
          const t = fs.existsSync(out) ? fs.readFileSync(out, "utf8") : "";
          return t.endsWith("\n") && t;
        }, "the typed line to arrive in xterm");
        assert.equal(typed, `${saved.trim()}\n`, "what was typed is what was kept");
        await screenshot(browser, "after-dictation-typed.png");
      } finally {
        term.kill();
      }
    },
    "type-and-save",
  );
});

test("After dictation: with no window to type into, the text goes to the clipboard and a notification says so", { timeout: 180_000 }, async () => {
  const settings = { shortcut: "Ctrl+Alt+Space", shortcut_mode: "toggle", after_dictation: "type" };
  await withApp(
    settings,
    async (browser) => {
      // The app that had the focus closes: the focus falls back to the desktop; the pointer
      // rests where there is no window.
      const { term } = await focusedXterm(path.join(home, "closed.txt"));
      term.kill();
      await until(() => xdotool("search", "--onlyvisible", "--pid", String(term.pid)) === null, "xterm to close");
      xdotool("mousemove", "1270", "890");
      const monitor = spawn("dbus-monitor", ["--session", "interface='org.freedesktop.Notifications',member='Notify'"], {
        stdio: ["ignore", "pipe", "ignore"],
      });
      let bus = "";
      monitor.stdout.on("data", (d) => (bus += d));
      try {
        // dbus-monitor says it is monitoring before anything else.
        await until(() => bus.length > 0, "dbus-monitor to start", 10_000);
        await dictateWithTheShortcut(browser);
        // Kept as a draft in the window, with the reason and where the text went.
        const textarea = await browser.$("#drafts .draft textarea");
        await textarea.waitForDisplayed({ timeout: 60_000, timeoutMsg: "the dictation did not stay as a draft" });
        const text = await textarea.getValue();
        assert.match(text, /milk/i);
        const notice = await browser.$("#dictation-notice");
        await notice.waitForDisplayed({ timeout: 10_000 });
        assert.match(await notice.getText(), /not typed.*focus.*clipboard/is);
        // On the clipboard, for any app to paste.
        const clip = execFileSync("xclip", ["-o", "-selection", "clipboard"], { timeout: 10_000 }).toString();
        assert.equal(clip, text.trim());
        // And the desktop was told.
        const told = await until(() => /Notify/.test(bus) && /not typed/.test(bus) && bus, "the notification on the session bus", 10_000);
        assert.match(told, /clipboard/);
        await screenshot(browser, "after-dictation-clipboard.png");
      } finally {
        monitor.kill();
      }
    },
    "type-no-focus",
  );
});
