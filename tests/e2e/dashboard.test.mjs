// The performance dashboard in the real window: run the fast suite, see a bar for every scenario
// with a target whose numbers match the exported JSON, refuse a bad import, compare two runs,
// cancel a run; screenshots of each view go to test-artifacts/.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { application, launch, root, screenshot, tempDir } from "./fixtures.mjs";

const home = tempDir("umwelt-dash-");
const env = { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: path.join(home, "data"), HOME: home };

/** Click after centring the element (the sticky header would otherwise cover it). */
async function click(browser, selector) {
  const el = await browser.$(selector);
  await el.scrollIntoView({ block: "center" });
  await el.click();
}

/** Choose an option as a user would, firing the change event the UI listens to. */
function choose(browser, selector, index) {
  return browser.execute(
    (sel, i) => {
      const s = document.querySelector(sel);
      s.selectedIndex = i;
      s.dispatchEvent(new Event("change", { bubbles: true }));
    },
    selector,
    index,
  );
}

/** Call a command from inside the page, as the UI does. */
function invoke(browser, cmd, args = {}) {
  return browser.executeAsync(
    (cmd, args, done) => window.__TAURI_INTERNALS__.invoke(cmd, args).then(done, (e) => done({ error: e })),
    cmd,
    args,
  );
}

test("run the fast suite, read the bars, import, compare, cancel", { timeout: 600_000 }, async () => {
  const app = await launch(application, env);
  const { browser } = app;
  try {
    await (await browser.$("#tab-performance")).click();
    await (await browser.$("#no-runs")).waitForDisplayed({ timeout: 20_000 });

    await (await browser.$("#bench-sizes")).setValue("500");
    await click(browser, "#bench-run");
    await (await browser.$("#bench-progress")).waitForDisplayed({ timeout: 10_000 });
    await screenshot(browser, "dashboard-running.png");
    // The window stays responsive while the suite runs: switching views works.
    await (await browser.$("#tab-memories")).click();
    await (await browser.$("#record")).waitForDisplayed({ timeout: 5_000 });
    await (await browser.$("#tab-performance")).click();
    await (await browser.$("#targets-table")).waitForExist({ timeout: 400_000 });

    const runs = await invoke(browser, "list_runs");
    assert.equal(runs.length, 1);
    const exported = JSON.parse(await invoke(browser, "export_run", { id: runs[0].id, format: "json" }));
    const targeted = exported.results.filter((m) => m.mode === "on" && m.target_ms !== null);
    assert.ok(targeted.length >= 3, `fast suite rows with targets: ${targeted.length}`);
    const table = await browser.execute(() =>
      Array.from(document.querySelectorAll("#targets-table tbody tr"), (tr) => ({
        scenario: tr.dataset.scenario,
        size: Number(tr.dataset.size),
        p50: Number(tr.dataset.p50),
        p99: Number(tr.dataset.p99),
      })),
    );
    const bars = await (await browser.$("#targets-table")).parentElement().parentElement().$("canvas").getAttribute("data-bars");
    assert.equal(Number(bars), targeted.length, "one bar per scenario with a target");
    assert.deepEqual(
      table,
      targeted.map((m) => ({ scenario: m.scenario, size: m.size, p50: m.p50_ms, p99: m.p99_ms })),
      "the bars show the exported numbers",
    );
    await click(browser, "summary");
    await screenshot(browser, "dashboard-targets.png");
    await (await browser.$("#onoff-table")).scrollIntoView({ block: "center" });
    await screenshot(browser, "dashboard-on-off.png");
    await (await browser.$("#machine")).scrollIntoView({ block: "center" });
    assert.match(await (await browser.$("#machine")).getText(), /SQLite 3\.\d+/);
    await screenshot(browser, "dashboard-timings-machine.png");

    // A truncated file is refused with a clear message, and nothing changes.
    const json = JSON.stringify(exported);
    await (await browser.$("#import-text")).setValue(json.slice(0, json.length / 2));
    await click(browser, "#import-run");
    const err = await browser.$("#perf-error");
    await err.waitForDisplayed({ timeout: 10_000 });
    assert.match(await err.getText(), /not a benchmark report/);
    assert.equal((await invoke(browser, "list_runs")).length, 1);

    // A whole one is kept; then before/after between the two.
    await (await browser.$("#import-text")).setValue(json);
    await click(browser, "#import-run");
    await browser.waitUntil(async () => (await invoke(browser, "list_runs")).length === 2, { timeout: 10_000 });
    await choose(browser, "#compare-before", 1);
    await choose(browser, "#compare-after", 0);
    await click(browser, "#compare-run");
    await (await browser.$("#compare-table")).waitForExist({ timeout: 10_000 });
    const changes = await browser.execute(() => Array.from(document.querySelectorAll("#compare-table tbody tr td:last-child"), (td) => td.textContent));
    assert.equal(changes.length, exported.results.length);
    assert.ok(changes.every((c) => c === "within noise"), "a run compared with its own copy changes nothing");
    await (await browser.$("#compare-table")).scrollIntoView();
    await screenshot(browser, "dashboard-compare.png");
    assert.match(await (await browser.$("#machine-kernels")).getText(), /^(avx512-vnni|avx2|portable)$/);

    // A report of scripts/bench-peers.sh: Umwelt's p50 over each peer's, with the goals.
    const peers = fs.readFileSync(path.join(root, "docs/bench/peers-amd-epyc-2026-12-02.json"), "utf8");
    await (await browser.$("#import-text")).setValue(peers);
    await click(browser, "#import-run");
    const peersTable = await browser.$("#peers-table");
    await peersTable.waitForExist({ timeout: 10_000 });
    const peerRows = await browser.execute(() => Array.from(document.querySelectorAll("#peers-table tbody tr"), (tr) => tr.textContent ?? ""));
    assert.equal(peerRows.length, 4, peerRows.join("\n"));
    assert.ok(peerRows.some((r) => r.includes("recall_nofilter 10000") && r.includes("numpy") && r.includes("sqlite-vec")), peerRows.join("\n"));
    assert.ok(peerRows.some((r) => r.includes("embed 32") && r.includes("python-onnxruntime") && r.includes("≤ 0.5")), peerRows.join("\n"));
    await peersTable.scrollIntoView({ block: "center" });
    await screenshot(browser, "dashboard-peers.png");

    // Cancel works within a second or so of the current iteration.
    await (await browser.$("#bench-sizes")).setValue("50000");
    await click(browser, "#bench-run");
    await (await browser.$("#bench-cancel")).waitForClickable({ timeout: 10_000 });
    await browser.pause(500);
    const t0 = Date.now();
    await click(browser, "#bench-cancel");
    await (await browser.$("#bench-run")).waitForDisplayed({ timeout: 15_000 });
    assert.ok(Date.now() - t0 < 15_000);
  } finally {
    await app.close();
  }
});

test("the town suite from the dashboard: the second seed's four headline figures at a glance", { timeout: 300_000 }, async () => {
  const app = await launch(application, env);
  const { browser } = app;
  try {
    await (await browser.$("#tab-performance")).click();
    await choose(browser, "#bench-suite", 2);
    await browser.waitUntil(async () => (await (await browser.$("#bench-sizes")).getValue()) === "3360", {
      timeout: 5_000,
      timeoutMsg: "picking the town did not offer the full town's days",
    });
    await (await browser.$("#bench-sizes")).setValue("3");
    await click(browser, "#bench-run");
    await browser.waitUntil(
      async () => {
        const said = await browser.execute(() => document.querySelector("#perf-error")?.textContent ?? "");
        if (said) throw new Error(`the run failed: ${said}`);
        return /a night of 2[\s\u202f,.]?000 tellings/.test(await browser.execute(() => document.querySelector(".glance")?.textContent ?? ""));
      },
      { timeout: 240_000, timeoutMsg: "the town's figures never showed at a glance" },
    );
    const glance = await browser.execute(() => document.querySelector(".glance")?.textContent ?? "");
    for (const figure of [/holds: does one holder know this/, /a page of 50 holdings about one entity/, /the town's holdings in one file/, /MiB/]) {
      assert.match(glance, figure);
    }
    const command = await (await browser.$("#bench-command")).getText();
    assert.match(command, /umwelt-cli bench --suite town --sizes 3/);
    await screenshot(browser, "dashboard-town.png");
  } finally {
    await app.close();
  }
});
