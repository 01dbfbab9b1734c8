// Who holds what in the real window: load the demo town (a progress bar, a file of its own,
// the user's memories untouched), pick a holder, see a claim told to them with its teller, see
// who holds it, see who knows what about an entity, and search within the holder.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { application, launch, screenshot, tempDir } from "./fixtures.mjs";

const home = tempDir("umwelt-holders-");
const data = path.join(home, "data");
const env = {
  XDG_CONFIG_HOME: home,
  UMWELT_DATA_DIR: data,
  HOME: home,
  UMWELT_MODELS_DIR: process.env.UMWELT_MODELS_DIR ?? path.join(os.homedir(), ".cache", "umwelt", "models"),
};

before(() => {
  assert.ok(fs.existsSync(application), `build the app first: ${application}`);
});

async function click(browser, sel) {
  const el = await browser.$(sel);
  await el.waitForClickable({ timeout: 20_000 });
  await el.click();
}

const all = (browser, sel) => browser.execute((sel) => Array.from(document.querySelectorAll(sel), (e) => e.textContent?.trim() ?? ""), sel);

test("load the demo town, pick a holder, see a told claim with its teller", { timeout: 300_000 }, async () => {
  const app = await launch(application, env);
  const { browser } = app;
  try {
    await click(browser, "#tab-holders");
    await click(browser, "#load-town");
    // The bar shows while the town is built, day by day.
    await browser.waitUntil(async () => (await browser.$("#town-progress").isExisting()) || (await all(browser, "#holder-list button")).length > 0, {
      timeout: 30_000,
      timeoutMsg: "no progress bar and no town",
    });
    await browser.waitUntil(async () => (await all(browser, "#holder-list button")).length === 40, {
      timeout: 180_000,
      timeoutMsg: "the town's 40 people never showed",
    });
    assert.ok(fs.existsSync(path.join(data, "demo-town.sqlite")), "the town is a file of its own");
    const world = await browser.execute(() => document.querySelector("#world").value);
    assert.equal(world, "demo_town");

    // Pick a holder; among what they know, something told to them by someone named.
    await click(browser, "#holder-list li:first-child button");
    await browser.waitUntil(async () => (await all(browser, "#holdings .holding")).length > 0, { timeout: 20_000, timeoutMsg: "the holder knows nothing" });
    let told = await all(browser, '#holdings .holding[data-how="told"] .provenance');
    for (let more = 0; told.length === 0 && more < 10 && (await browser.$("button=Show more").isExisting()); more++) {
      await click(browser, "button=Show more");
      told = await all(browser, '#holdings .holding[data-how="told"] .provenance');
    }
    assert.ok(told.length > 0, "a told claim is listed");
    const teller = /told by (\w+)/.exec(told[0])?.[1];
    assert.ok(teller, `the teller is named: ${told[0]}`);
    await screenshot(browser, "holders-town.png");

    // Who holds that claim: the teller among them.
    await click(browser, '#holdings .holding[data-how="told"] .text');
    await browser.waitUntil(async () => (await all(browser, "#who-holds li")).length >= 2, { timeout: 20_000, timeoutMsg: "who holds it never showed" });
    const who = (await all(browser, "#who-holds li")).join(" | ");
    assert.match(who, new RegExp(teller), who);

    // Who knows what about an entity.
    await click(browser, "#entity-list li:first-child button");
    await browser.waitUntil(async () => (await all(browser, "#holdings .holding strong")).length > 0, { timeout: 20_000, timeoutMsg: "nobody knows anything about it" });

    // Search within one holder: every hit is theirs to know.
    await click(browser, "#holder-list li:nth-child(2) button");
    await (await browser.$("#claim-search")).setValue("said the lantern at the harbour");
    await click(browser, "form.search button[type=submit]");
    await browser.waitUntil(async () => (await all(browser, "#claim-hits li")).length > 0, { timeout: 60_000, timeoutMsg: "the search found nothing" });
    await screenshot(browser, "holders-search.png");

    // The user's own memories were not touched: the notebook has no holders yet.
    const notebook = await browser.executeAsync((done) =>
      window.__TAURI_INTERNALS__.invoke("list_holders", { world: "notebook" }).then(done, (e) => done({ error: e })),
    );
    assert.deepEqual(notebook, []);
  } finally {
    await app.close();
  }
});
