// What the app has to say about its start reaches the window: a damaged settings file is set
// aside and the defaults used, and the window says so (once) instead of keeping it to itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { application, launch, screenshot, tempDir } from "./fixtures.mjs";

/** The text of the memory list. (Its rows are positioned by transform inside a scroller, and
 * WebDriver's idea of visible text leaves their first lines out: read the DOM's text.) */
function listedText(browser) {
  return browser.execute(() => document.querySelector("#memories")?.textContent ?? "");
}


test("a damaged settings file is set aside and the window says so", { timeout: 120_000 }, async () => {
  const home = tempDir("umwelt-e2e-startup-");
  const data = path.join(home, "data");
  fs.mkdirSync(data, { recursive: true });
  fs.writeFileSync(path.join(data, "settings.json"), '{"voice": "af_heart", "speed": ');
  const app = await launch(application, { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: data });
  const { browser } = app;
  try {
    const note = await browser.$("#startup-note");
    await note.waitForDisplayed({ timeout: 30_000, timeoutMsg: "the window never said the settings were damaged" });
    assert.match(await note.getText(), /damaged/i);
    await screenshot(browser, "startup-note.png");
    assert.ok(fs.existsSync(path.join(data, "settings.json.damaged")), "the damaged file is kept for the user");
    await (await note.$("button")).click();
    await note.waitForDisplayed({ reverse: true, timeout: 5_000 });
  } finally {
    await app.close();
  }
});

test("a damaged memory file and dashboard history are kept aside, and the window opens and says so", { timeout: 120_000 }, async () => {
  const home = tempDir("umwelt-e2e-startup-db-");
  const data = path.join(home, "data");
  fs.mkdirSync(data, { recursive: true });
  const garbage = "these bytes were a database once; they are the user's and must be kept";
  fs.writeFileSync(path.join(data, "memories.sqlite"), garbage);
  fs.writeFileSync(path.join(data, "perf.sqlite"), garbage);
  const app = await launch(application, { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: data });
  const { browser } = app;
  try {
    const note = await browser.$("#startup-note");
    await note.waitForDisplayed({ timeout: 30_000, timeoutMsg: "the window never said the memory file was damaged" });
    const said = await note.getText();
    assert.match(said, /memory file could not be opened/i);
    assert.match(said, /dashboard's history could not be read/i);
    await screenshot(browser, "startup-damaged-db.png");
    const kept = fs.readdirSync(data).filter((n) => n.includes(".damaged-"));
    for (const name of ["memories.sqlite", "perf.sqlite"]) {
      const aside = kept.find((n) => n.startsWith(`${name}.damaged-`));
      assert.ok(aside, `${name} is kept aside: ${kept}`);
      assert.equal(fs.readFileSync(path.join(data, aside), "utf8"), garbage, "kept untouched");
    }
    // The fresh memory file works: a typed note is kept.
    const text = "a note in the fresh file";
    await (await browser.$("#note")).setValue(text);
    await browser.keys("Enter");
    await browser.waitUntil(async () => (await listedText(browser)).includes(text), {
      timeout: 30_000,
      timeoutMsg: "a note typed into the fresh memory file was not kept",
    });
  } finally {
    await app.close();
  }
});
