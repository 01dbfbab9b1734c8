// Settings → Privacy in the real window, with the real keyring (tests/e2e/with-keyring.sh):
// the memory file moves from the keyring's key to a passphrase chosen at the next start, asks
// for it at every start (a wrong one asked again), and becomes plain when encryption is turned
// off. Without a keyring, the window says the memories are stored unencrypted.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync, spawn } from "node:child_process";
import { application, launch, screenshot, tempDir } from "./fixtures.mjs";

const keyring = process.env.UMWELT_E2E_KEYRING === "1";

/** The text of the memory list (read from the DOM: its rows are positioned by transform). */
function listedText(browser) {
  return browser.execute(() => document.querySelector("#memories")?.textContent ?? "");
}

/** What `sqlite3` makes of the file: its answer, or its error. */
function sqlite(db, sql) {
  try {
    return execFileSync("sqlite3", [db, sql], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    return String(e.stderr);
  }
}

/** Whether `text` is anywhere in the memory file or its log, as bytes. */
function inTheClear(data, text) {
  return ["memories.sqlite", "memories.sqlite-wal"].some((f) => {
    const p = path.join(data, f);
    return fs.existsSync(p) && fs.readFileSync(p).includes(Buffer.from(text));
  });
}

async function remember(browser, text) {
  await (await browser.$("#note")).waitForDisplayed({ timeout: 30_000 });
  await (await browser.$("#note")).setValue(text);
  await browser.keys("Enter");
  await browser.waitUntil(async () => (await listedText(browser)).includes(text), { timeout: 30_000, timeoutMsg: `"${text}" was not kept` });
}

async function choose(browser, value) {
  await (await browser.$("#tab-settings")).click();
  const radio = await browser.$(`#encryption-${value}`);
  await radio.waitForDisplayed({ timeout: 30_000 });
  await radio.click();
  await browser.waitUntil(async () => /saved/i.test(await (await browser.$("#settings-status")).getText()), { timeout: 10_000 });
}

/** Type the passphrase into the start-up prompt (twice when choosing one) and submit it. */
async function unlock(browser, passphrase, { choosing = false } = {}) {
  const field = await browser.$("#passphrase");
  await field.waitForDisplayed({ timeout: 30_000, timeoutMsg: "no passphrase prompt" });
  assert.equal(await browser.$("#passphrase-again").isExisting(), choosing);
  await field.setValue(passphrase);
  if (choosing) await (await browser.$("#passphrase-again")).setValue(passphrase);
  await (await browser.$("#unlock-submit")).click();
}

test("a passphrase chosen in Settings → Privacy is asked for at each start, and encryption turned off makes the file plain", { timeout: 300_000, skip: !keyring && "needs the keyring (tests/e2e/with-keyring.sh)" }, async () => {
  const home = tempDir("umwelt-e2e-privacy-");
  const data = path.join(home, "data");
  const env = { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: data };
  const db = path.join(data, "memories.sqlite");
  const secret = "the safe code is 4711";

  // A fresh profile: encrypted with the keyring's key, asked nothing.
  let app = await launch(application, env);
  try {
    await remember(app.browser, secret);
    await choose(app.browser, "passphrase");
    assert.match(await (await app.browser.$("#privacy-now")).getText(), /recordings are encrypted; the key is kept in the system keyring/);
    assert.match(await (await app.browser.$("#privacy-later")).getText(), /choose a passphrase the next time it starts/);
    await screenshot(app.browser, "privacy-settings.png");
  } finally {
    await app.close();
  }
  assert.match(sqlite(db, "SELECT count(*) FROM sqlite_master"), /file is not a database/);
  assert.ok(!inTheClear(data, secret), "the note is in the clear on the disk");

  // The next start asks to choose the passphrase, and moves the file to it.
  app = await launch(application, env);
  try {
    await unlock(app.browser, "correct horse battery", { choosing: true });
    await app.browser.waitUntil(async () => (await listedText(app.browser)).includes(secret), { timeout: 60_000, timeoutMsg: "the note did not come back" });
  } finally {
    await app.close();
  }

  // From now on it is asked for; a wrong one is asked again, and changes nothing.
  const before = fs.readFileSync(db);
  app = await launch(application, env);
  try {
    await unlock(app.browser, "wrong horse");
    await app.browser.waitUntil(async () => /does not open/.test(await (await app.browser.$("#unlock-reason")).getText()), { timeout: 30_000, timeoutMsg: "a wrong passphrase was not said to be wrong" });
    await screenshot(app.browser, "privacy-wrong-passphrase.png");
    assert.deepEqual(fs.readFileSync(db), before, "a wrong passphrase changed the file");
    await unlock(app.browser, "correct horse battery");
    await app.browser.waitUntil(async () => (await listedText(app.browser)).includes(secret), { timeout: 60_000, timeoutMsg: "the right passphrase did not open it" });
    // Encryption off: plain again at the next start (the passphrase opens it one last time).
    await choose(app.browser, "off");
    assert.match(await (await app.browser.$("#privacy-later")).getText(), /plain the next time it starts/);
  } finally {
    await app.close();
  }
  app = await launch(application, env);
  try {
    await unlock(app.browser, "correct horse battery");
    await app.browser.waitUntil(async () => (await listedText(app.browser)).includes(secret), { timeout: 60_000 });
  } finally {
    await app.close();
  }
  assert.match(sqlite(db, "SELECT text FROM claim"), /the safe code is 4711/);
});

test("without a keyring the window says the memories are stored unencrypted", { timeout: 120_000 }, async () => {
  const home = tempDir("umwelt-e2e-no-keyring-");
  const data = path.join(home, "data");
  // A session bus of its own, with no Secret Service on it (and none to start).
  const conf = path.join(home, "bus.conf");
  fs.writeFileSync(
    conf,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:dir=${home}</listen><policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>`,
  );
  const bus = spawn("dbus-daemon", [`--config-file=${conf}`, "--nofork", "--print-address=1"], { stdio: ["ignore", "pipe", "ignore"] });
  const address = await new Promise((resolve) => bus.stdout.once("data", (d) => resolve(String(d).trim())));
  const app = await launch(application, { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: data, DBUS_SESSION_BUS_ADDRESS: address });
  try {
    const warning = await app.browser.$("#privacy-warning");
    await warning.waitForDisplayed({ timeout: 60_000, timeoutMsg: "no warning that the memories are stored unencrypted" });
    assert.match(await warning.getText(), /stored unencrypted/);
    await screenshot(app.browser, "privacy-no-keyring.png");
    await remember(app.browser, "kept, plainly");
  } finally {
    await app.close();
    bus.kill();
  }
  assert.match(sqlite(path.join(data, "memories.sqlite"), "SELECT text FROM claim"), /kept, plainly/);
});
