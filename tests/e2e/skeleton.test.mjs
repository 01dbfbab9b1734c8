// The walking skeleton in the real window: dictate through the ALSA microphone, watch the words
// appear while speaking, edit the draft, save it, find it by meaning, and find it again after a
// restart.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { application, fifoMicrophone, launch, screenshot, speechRaw, tempDir, waitForLiveText } from "./fixtures.mjs";

// UMWELT_E2E_HOME lets tests/deb/test.sh find the data this run leaves behind.
const home = process.env.UMWELT_E2E_HOME ?? tempDir("umwelt-e2e-");
fs.mkdirSync(home, { recursive: true });
const env = { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: path.join(home, "data") };
let mic;

before(() => {
  assert.ok(fs.existsSync(application), `build the app first: ${application}`);
  mic = fifoMicrophone(home, speechRaw(home, "remember to buy milk"));
});
after(() => mic?.stop());

/** The texts of the memories listed under `selector`, top first. */
function memoryTexts(browser, selector) {
  return browser.execute(
    (sel) => Array.from(document.querySelectorAll(`${sel} .memory .text`), (e) => e.textContent ?? ""),
    selector,
  );
}

test("dictate a note, see it appear while speaking, edit and save it, find it by meaning", { timeout: 180_000 }, async () => {
  const app = await launch(application, env);
  const { browser } = app;
  const failed = async (e, name) => {
    await screenshot(browser, name);
    const shown = [];
    for (const sel of ["#error", "#dictation-error"]) {
      if (await browser.$(sel).isExisting()) shown.push(await (await browser.$(sel)).getText());
    }
    throw new Error(`${e.message}; the app said: ${shown.join(" / ") || "(no error shown)"}`);
  };
  try {
    const record = await browser.$("#record");
    await record.waitForClickable({ timeout: 30_000 });
    await record.click();
    await browser.waitUntil(async () => (await record.getAttribute("data-phase")) === "listening", { timeout: 30_000 });
    // The level meter moves and the words show up while the sentence is still being recorded.
    await (await browser.$("#level-meter")).waitForDisplayed({ timeout: 5_000 });
    // The sentence takes 1.5 s to say; its text should follow within seconds, however busy
    // WebKit and WebDriver keep the machine (whisper's threads follow the load).
    await waitForLiveText(browser, /milk/i, 20_000, "no text appeared while dictating").catch((e) =>
      failed(e, "dictation-no-live-text.png"),
    );
    assert.equal(await record.getAttribute("data-phase"), "listening", "the text came before Stop");
    await screenshot(browser, "dictation-live.png");
    await record.click();

    // A draft: read it, fix it, save it.
    const textarea = await browser.$("#drafts .draft textarea");
    await textarea.waitForDisplayed({ timeout: 60_000 }).catch((e) => failed(e, "dictation-no-draft.png"));
    assert.match(await textarea.getValue(), /milk/i, "the draft holds what was said");
    await textarea.setValue("remember to buy milk and eggs");
    await screenshot(browser, "dictation-draft.png");
    await (await browser.$("#drafts .save-draft")).click();
    await browser
      .waitUntil(async () => (await memoryTexts(browser, "#memories"))[0] === "remember to buy milk and eggs", {
        timeout: 30_000,
        timeoutMsg: "the edited note never appeared",
      })
      .catch((e) => failed(e, "dictation-not-saved.png"));
    assert.equal(await browser.$("#drafts").isExisting(), false, "the draft is gone once saved");
    assert.match(await (await browser.$("#record-state")).getText(), /saved/i);
    await screenshot(browser, "skeleton-dictated.png");

    // Typed notes to search among.
    for (const text of ["the dentist appointment is on Tuesday at nine", "call mum about the holiday plans"]) {
      await (await browser.$("#note")).setValue(text);
      await browser.keys("Enter");
      await browser.waitUntil(async () => (await memoryTexts(browser, "#memories"))[0] === text, { timeout: 30_000 });
    }

    await (await browser.$("#search")).setValue("groceries");
    await browser.keys("Enter");
    await browser.waitUntil(async () => (await memoryTexts(browser, "#results")).length > 0, { timeout: 30_000 });
    const results = await memoryTexts(browser, "#results");
    assert.match(results[0], /milk/i, `"groceries" should find the milk note first, got ${JSON.stringify(results)}`);
    // Search is hybrid: a phrase the user remembers finds its note first, and says why.
    await (await browser.$("#search")).setValue("appointment is on Tuesday");
    await browser.keys("Enter");
    await browser.waitUntil(async () => /dentist/.test((await memoryTexts(browser, "#results"))[0] ?? ""), {
      timeout: 30_000,
      timeoutMsg: "the phrase did not find the dentist note first",
    });
    const why = await (await browser.$("#results .why")).getText();
    assert.match(why, /exact phrase/, why);
    await screenshot(browser, "skeleton-search.png");
  } finally {
    await app.close();
  }
});

test("the memories are still there after closing and reopening the app", { timeout: 120_000 }, async () => {
  if (process.env.UMWELT_E2E_KEYRING === "1") {
    // With the keyring there, the memory file is encrypted: sqlite3 cannot read it, and the
    // dictated words are nowhere in it or its log.
    const db = path.join(env.UMWELT_DATA_DIR, "memories.sqlite");
    let said = "";
    try {
      execFileSync("sqlite3", [db, "SELECT count(*) FROM sqlite_master"], { stdio: ["ignore", "pipe", "pipe"] });
    } catch (e) {
      said = String(e.stderr);
    }
    assert.match(said, /file is not a database/);
    for (const f of [db, `${db}-wal`]) {
      if (fs.existsSync(f)) assert.ok(!fs.readFileSync(f).includes(Buffer.from("milk")), `${f} holds the note in the clear`);
    }
    // The dictation's recording is encrypted too: no WAV header, no words, in any file there.
    const recordings = path.join(env.UMWELT_DATA_DIR, "recordings");
    const kept = fs.readdirSync(recordings).map((n) => path.join(recordings, n));
    assert.ok(kept.some((f) => f.endsWith(".wav")), `no recording was kept: ${kept}`);
    for (const f of kept) {
      const bytes = fs.readFileSync(f);
      assert.ok(bytes.subarray(0, 8).equals(Buffer.from("UMWSEAL1")), `${f} is not encrypted`);
      assert.ok(!bytes.includes(Buffer.from("RIFF")) && !bytes.includes(Buffer.from("milk")), `${f} shows what it holds`);
    }
  }
  const app = await launch(application, env);
  try {
    const { browser } = app;
    await browser.waitUntil(async () => (await memoryTexts(browser, "#memories")).length === 3, {
      timeout: 30_000,
      timeoutMsg: "the three memories did not come back",
    });
    assert.ok((await memoryTexts(browser, "#memories")).some((t) => /milk/i.test(t)));
    await screenshot(browser, "skeleton-reopened.png");
  } finally {
    await app.close();
  }
});
