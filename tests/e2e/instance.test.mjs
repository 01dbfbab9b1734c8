// One Umwelt per data folder: a second launch on the same folder hands over to the first (which
// brings its window forward) and exits without a window. And the app's log, shown in Settings,
// says what the app did without ever holding the text of a memory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { application, launch, screenshot, tempDir } from "./fixtures.mjs";

/** The text of the memory list. (Its rows are positioned by transform inside a scroller, and
 * WebDriver's idea of visible text leaves their first lines out: read the DOM's text.) */
function listedText(browser) {
  return browser.execute(() => document.querySelector("#memories")?.textContent ?? "");
}


function run(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(application, [], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the second launch did not exit within 20 s: ${out}`));
    }, 20_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

function logText(data) {
  const dir = path.join(data, "logs");
  return fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), "utf8")).join("") : "";
}

test("a second launch on the same data folder hands over to the first; the log keeps no memory text", { timeout: 180_000 }, async () => {
  const home = tempDir("umwelt-e2e-instance-");
  const data = path.join(home, "data");
  const env = { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: data };
  const app = await launch(application, env);
  const { browser } = app;
  try {
    const secret = `the zebra-${Date.now()} combination is 4 7 1 1`;
    await (await browser.$("#note")).waitForDisplayed({ timeout: 30_000 });
    await (await browser.$("#note")).setValue(secret);
    await browser.keys("Enter");
    await browser.waitUntil(async () => (await listedText(browser)).includes(secret), { timeout: 30_000 });

    const second = await run(env);
    assert.equal(second.code, 0, second.out);
    assert.match(second.out, /already running/i);
    await browser.waitUntil(async () => /brought it to the front/.test(logText(data)), {
      timeout: 10_000,
      timeoutMsg: `the first launch never heard the second: ${logText(data)}`,
    });
    // The first window still works.
    await (await browser.$("#search")).setValue("zebra");
    await browser.keys("Enter");

    // Settings shows where the log is; the log says the app started and never holds the note.
    await (await browser.$('[data-testid="nav-settings"]')).click();
    const folder = await browser.$("#log-folder");
    await browser.waitUntil(async () => (await folder.getText()) === path.join(data, "logs"), { timeout: 10_000 });
    await screenshot(browser, "settings-log-folder.png");
    const log = logText(data);
    assert.match(log, /Umwelt .* started/);
    assert.ok(!log.includes("zebra"), "the log holds the text of a memory");
  } finally {
    await app.close();
  }
});
