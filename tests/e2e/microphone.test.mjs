// A microphone unplugged mid-dictation, in the real window: the device goes quiet (an ALSA FIFO
// device whose writer stops sending), the app stops the dictation by itself, keeps what was
// said as a draft, and says what happened.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fifoMicrophone, launch, root, screenshot, speechRaw, tempDir } from "./fixtures.mjs";

const application = process.env.UMWELT_APP ?? path.join(process.env.CARGO_TARGET_DIR ?? path.join(root, "target"), "debug", "umwelt");
let mic;
let home;

before(() => {
  assert.ok(fs.existsSync(application), `build the app first: ${application}`);
  home = tempDir("umwelt-e2e-mic-");
  mic = fifoMicrophone(home, speechRaw(home, "remember to buy milk"), { hangAfterS: 2 });
});
after(() => mic?.stop());

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
