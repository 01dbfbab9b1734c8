// Reading aloud in the real window: choose a voice and a speed in Settings and see them kept,
// then read a typed note aloud through an ALSA speaker that plays at real-time pace, watch the
// header's "Speaking…" come and go, and stop a reply from the header.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { application, launch, screenshot, tempDir } from "./fixtures.mjs";

const home = tempDir("umwelt-voice-");
const env = { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: path.join(home, "data") };
const NOTE = "the spare key is under the blue flower pot";
// Long enough (half a minute of speech) that only Stop can end it within seconds.
const LONG_NOTE =
  "Packing list for the trip to the coast. Two warm jumpers, the rain jacket and the walking boots. " +
  "The charger for the camera, the spare batteries and the small tripod. Sun cream, a hat and the blue towel. " +
  "The map of the coastal path, the train tickets and the booking for the cottage. " +
  "Snacks for the journey, a flask for tea, and the book I have been meaning to finish since the spring.";
let speaker;

/**
 * A speaker for ALSA: `$XDG_CONFIG_HOME/alsa/asoundrc` makes the default playback device write
 * S16_LE 24 kHz mono into a FIFO, and a reader drains it at real-time pace (the pipe's
 * back-pressure paces the app the way a sound card's clock would). Every time the app opens the
 * device the reader starts again; `bytes` counts what was played.
 */
function fifoSpeaker(dir) {
  const fifo = path.join(dir, "speaker.fifo");
  execFileSync("mkfifo", [fifo]);
  fs.mkdirSync(path.join(dir, "alsa"), { recursive: true });
  fs.writeFileSync(
    path.join(dir, "alsa", "asoundrc"),
    `pcm.!default { type asym playback.pcm "umwelt_test_speaker" capture.pcm "null" }
pcm.umwelt_test_speaker {
  type plug
  slave { pcm { type file slave.pcm "null" file "${fifo}" format "raw" } format S16_LE rate 24000 channels 1 }
}
`,
  );
  const state = { bytes: 0, stopped: false };
  const bytesPerMs = (24000 * 2) / 1000;
  async function serve() {
    const buf = Buffer.alloc(4800); // 100 ms
    while (!state.stopped) {
      // Opening a FIFO for reading waits for a writer: the app opening the speaker.
      const fd = await new Promise((resolve) => fs.open(fifo, "r", (err, fd) => resolve(err ? null : fd)));
      if (fd === null || state.stopped) break;
      const t0 = Date.now();
      let got = 0;
      for (;;) {
        const n = await new Promise((resolve) => fs.read(fd, buf, 0, buf.length, null, (err, n) => resolve(err ? 0 : n)));
        if (n === 0) break; // the app closed the speaker
        got += n;
        state.bytes += n;
        const wait = t0 + got / bytesPerMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      fs.close(fd, () => {});
    }
  }
  serve();
  return {
    get bytes() {
      return state.bytes;
    },
    stop() {
      state.stopped = true;
      // Unblock a reader waiting in open().
      try {
        fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
      } catch {}
    },
  };
}

before(() => {
  assert.ok(fs.existsSync(application), `build the app first: ${application}`);
  speaker = fifoSpeaker(home);
});
after(() => speaker?.stop());

const $id = (testid) => `[data-testid="${testid}"]`;

/** Click after centring the element (the sticky header would otherwise cover it). */
async function click(browser, selector) {
  const el = await browser.$(selector);
  await el.waitForDisplayed({ timeout: 10_000 });
  await el.scrollIntoView({ block: "center" });
  await el.click();
}

/** Set a control's value as a user would, firing the events the UI listens to. */
function setValue(browser, selector, value, events = ["change"]) {
  return browser.execute(
    (sel, v, evs) => {
      const el = document.querySelector(sel);
      el.value = v;
      for (const e of evs) el.dispatchEvent(new Event(e, { bubbles: true }));
      return el.value;
    },
    selector,
    value,
    events,
  );
}

/** A control's current value. */
function valueOf(browser, selector) {
  return browser.execute((sel) => document.querySelector(sel)?.value ?? null, selector);
}

/** Call a command from inside the page, as the UI does. */
function invoke(browser, cmd, args = {}) {
  return browser.executeAsync(
    (cmd, args, done) => window.__TAURI_INTERNALS__.invoke(cmd, args).then(done, (e) => done({ error: e })),
    cmd,
    args,
  );
}

/** The error messages on show, wherever they are. */
function errorsShown(browser) {
  return browser.execute(() =>
    Array.from(document.querySelectorAll("#error, #speak-error, #settings-error, #try-error"), (e) => e.textContent?.trim() ?? ""),
  );
}

/** The texts of the memories listed under `selector`, top first. */
function memoryTexts(browser, selector) {
  return browser.execute(
    (sel) => Array.from(document.querySelectorAll(`${sel} .memory .text`), (e) => e.textContent ?? ""),
    selector,
  );
}

/** Wait for the header's "Speaking…" to be shown (or gone). */
function waitSpeaking(browser, shown, timeout, timeoutMsg) {
  return browser.waitUntil(
    () => browser.execute((sel) => document.querySelector(sel) !== null, '[data-testid="speaking-indicator"]').then((on) => on === shown),
    { timeout, interval: 100, timeoutMsg },
  );
}

async function openSettings(browser) {
  await click(browser, $id("nav-settings"));
  await (await browser.$($id("voice-select"))).waitForDisplayed({ timeout: 20_000 });
}

test("choose a voice and a speed, then read a note aloud", { timeout: 240_000 }, async () => {
  const app = await launch(application, env);
  const { browser } = app;
  try {
    await (await browser.$("#record")).waitForDisplayed({ timeout: 30_000 });

    // Settings: a voice and a speed, saved the moment they change.
    await openSettings(browser);
    const voices = await invoke(browser, "list_voices");
    assert.ok(voices.some((v) => v.id === "am_michael"), `am_michael among ${JSON.stringify(voices.map((v) => v.id))}`);
    const groups = await browser.execute(() =>
      Array.from(document.querySelectorAll('[data-testid="voice-select"] optgroup'), (g) => g.label),
    );
    assert.deepEqual(groups.slice(0, 2), ["American", "British"], "voices are grouped by accent");
    const firstSpeaker = await browser.execute(() => document.querySelector('[data-testid="speaker-select"] option')?.textContent);
    assert.equal(firstSpeaker, "System default");

    assert.equal(await setValue(browser, $id("voice-select"), "am_michael"), "am_michael");
    await browser.waitUntil(async () => (await invoke(browser, "get_settings")).voice === "am_michael", {
      timeout: 10_000,
      timeoutMsg: "the voice was not saved",
    });
    assert.equal(await setValue(browser, $id("speed-slider"), "1.2", ["input", "change"]), "1.2");
    await browser.waitUntil(async () => Math.abs((await invoke(browser, "get_settings")).speed - 1.2) < 1e-6, {
      timeout: 10_000,
      timeoutMsg: "the speed was not saved",
    });
    assert.equal(await (await browser.$($id("speed-value"))).getText(), "1.20×");
    assert.deepEqual(await errorsShown(browser), []);
    await screenshot(browser, "voice-settings.png");

    // Away and back: the view reads the settings afresh and shows what was saved.
    await click(browser, "#tab-memories");
    await (await browser.$("#note")).waitForDisplayed({ timeout: 5_000 });
    await openSettings(browser);
    assert.equal(await valueOf(browser, $id("voice-select")), "am_michael");
    assert.equal(Number(await valueOf(browser, $id("speed-slider"))), 1.2);
    assert.equal(await (await browser.$($id("speed-value"))).getText(), "1.20×");

    // A typed note, read aloud from its speaker button.
    await click(browser, "#tab-memories");
    await (await browser.$("#note")).setValue(NOTE);
    await browser.keys("Enter");
    await browser.waitUntil(async () => (await memoryTexts(browser, "#memories"))[0] === NOTE, {
      timeout: 30_000,
      timeoutMsg: "the typed note never appeared",
    });
    const button = `#memories .memory:first-child ${$id("speak-memory")}`;
    assert.equal(await (await browser.$(button)).getAttribute("aria-label"), "Read aloud");
    const before = speaker.bytes;
    await click(browser, button);
    await waitSpeaking(browser, true, 10_000, "no “Speaking…” in the header");
    assert.match(await (await browser.$($id("speaking-indicator"))).getText(), /Speaking…/);
    assert.equal(await (await browser.$(button)).getAttribute("data-reading"), "true", "the pressed button turns into Stop");
    await screenshot(browser, "voice-speaking.png");
    await waitSpeaking(browser, false, 60_000, "“Speaking…” never went away");
    assert.deepEqual(await errorsShown(browser), [], "reading aloud showed an error");
    assert.ok(speaker.bytes - before > 24000 * 2 * 0.5, `half a second of speech reached the speaker (got ${speaker.bytes - before} bytes)`);
    assert.equal(await (await browser.$(button)).getAttribute("data-reading"), "false");

    // The reply's timing: the settings view says how soon it was heard.
    await openSettings(browser);
    await browser.waitUntil(async () => /first sound after \d+ ms/.test(await (await browser.$("#try-state")).getText()), {
      timeout: 5_000,
      timeoutMsg: "no first-sound time after the reply",
    });

    // The header's Stop ends a long reply within seconds.
    await click(browser, "#tab-memories");
    await (await browser.$("#note")).setValue(LONG_NOTE);
    await browser.keys("Enter");
    await browser.waitUntil(async () => (await memoryTexts(browser, "#memories"))[0] === LONG_NOTE, { timeout: 30_000 });
    await click(browser, button);
    await waitSpeaking(browser, true, 10_000, "the long note was not read");
    const heard = speaker.bytes;
    await browser.waitUntil(() => speaker.bytes > heard, { timeout: 30_000, timeoutMsg: "the long note never reached the speaker" });
    await click(browser, $id("stop-speaking"));
    await waitSpeaking(browser, false, 5_000, "Stop did not stop the reply");
    assert.equal(await (await browser.$(button)).getAttribute("data-reading"), "false");
    assert.deepEqual(await errorsShown(browser), []);
    await screenshot(browser, "voice-stopped.png");
  } finally {
    await app.close();
  }
});

test("the chosen voice and speed are still there after a restart", { timeout: 120_000 }, async () => {
  const app = await launch(application, env);
  const { browser } = app;
  try {
    await (await browser.$("#record")).waitForDisplayed({ timeout: 30_000 });
    await openSettings(browser);
    assert.equal(await valueOf(browser, $id("voice-select")), "am_michael");
    assert.equal(Number(await valueOf(browser, $id("speed-slider"))), 1.2);
  } finally {
    await app.close();
  }
});
