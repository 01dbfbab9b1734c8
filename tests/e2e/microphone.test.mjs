// The microphone in the real window. Settings' "Test" shows the level of what the microphone
// hears, recording nothing. And a microphone unplugged mid-dictation: the device goes quiet (an
// ALSA FIFO device whose writer stops sending), the app stops the dictation by itself, keeps
// what was said as a draft, and says what happened.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { application, fifoMicrophone, launch, screenshot, speechRaw, tempDir } from "./fixtures.mjs";

let mic, checkMic;
let home, checkHome;

before(() => {
  assert.ok(fs.existsSync(application), `build the app first: ${application}`);
  // Each app gets its own ALSA configuration (and so its own microphone).
  checkHome = tempDir("umwelt-e2e-mic-check-");
  checkMic = fifoMicrophone(checkHome, speechRaw(checkHome, "remember to buy milk"));
  home = tempDir("umwelt-e2e-mic-");
  mic = fifoMicrophone(home, speechRaw(home, "remember to buy milk"), { hangAfterS: 2 });
});
after(() => {
  mic?.stop();
  checkMic?.stop();
});

test("Settings' microphone test shows the level of what it hears", { timeout: 120_000 }, async () => {
  const data = path.join(checkHome, "data");
  const app = await launch(application, { XDG_CONFIG_HOME: checkHome, UMWELT_DATA_DIR: data });
  const { browser } = app;
  try {
    const nav = await browser.$('[data-testid="nav-settings"]');
    await nav.waitForClickable({ timeout: 30_000 });
    await nav.click();
    const testButton = await browser.$("#microphone-test");
    await testButton.waitForClickable({ timeout: 20_000 });
    await testButton.click();
    await (await browser.$("#microphone-meter")).waitForDisplayed({ timeout: 10_000, timeoutMsg: "no level meter" });
    // The sentence comes through: the meter moves and the app says the microphone hears.
    await browser.waitUntil(async () => /hears you/i.test(await (await browser.$("#microphone-test-message")).getText()), {
      timeout: 15_000,
      timeoutMsg: "the microphone test never heard the sentence",
    });
    await screenshot(browser, "microphone-test.png");
    assert.equal(await testButton.getAttribute("aria-pressed"), "true", "still testing");
    await testButton.click();
    await browser.waitUntil(async () => !(await browser.$("#microphone-meter").isExisting()), { timeout: 10_000, timeoutMsg: "Stop test left the meter on" });
    const recordings = path.join(data, "recordings");
    const kept = fs.existsSync(recordings) ? fs.readdirSync(recordings) : [];
    assert.deepEqual(kept, [], "a test records nothing");
  } finally {
    await app.close();
  }
});

test("a microphone unplugged mid-dictation stops it into a draft that keeps what was said", { timeout: 180_000 }, async () => {
  const app = await launch(application, { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: path.join(home, "data") });
  const { browser } = app;
  try {
    const record = await browser.$("#record");
    await record.waitForClickable({ timeout: 30_000 });
    await record.click();
    await browser.waitUntil(async () => (await record.getAttribute("data-phase")) === "listening", { timeout: 30_000 });
    // Nobody presses Stop: the app notices the device went quiet.
    const notice = await browser.$("#dictation-notice");
    await notice.waitForDisplayed({ timeout: 30_000, timeoutMsg: "the app did not notice the microphone was gone" });
    assert.match(await notice.getText(), /unplugged/i);
    assert.notEqual(await record.getAttribute("data-phase"), "listening", "the dictation stopped");
    const textarea = await browser.$("#drafts .draft textarea");
    await textarea.waitForDisplayed({ timeout: 30_000 });
    assert.match(await textarea.getValue(), /milk/i, "what was said before the microphone went is kept");
    await screenshot(browser, "microphone-unplugged.png");
  } finally {
    await app.close();
  }
});
