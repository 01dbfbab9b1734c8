// The memory browser at 100 000 memories, measured in the real window (not a test: the numbers
// go to docs/PERFORMANCE.md). Run with `npm run measure:browser` under Xvfb, after a build:
//
//   UMWELT_APP=$CARGO_TARGET_DIR/release/umwelt xvfb-run -a -s "-screen 0 1280x900x24" \
//     dbus-run-session -- npm run measure:browser
//
// It fills a new memory file with `umwelt-cli notebook` (seeded everyday notes), launches the
// app on it and measures: the first page after launch; searches as typed (request to results on
// screen, over IPC, from the window's side; p50/p95/p99); and a scripted scroll through the whole
// list (every frame's time). UMWELT_MEASURE_SIZE changes the size.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { application, artifacts, launch, tempDir } from "../fixtures.mjs";

const cli = process.env.UMWELT_CLI ?? path.join(path.dirname(application), "umwelt-cli");
const size = Number(process.env.UMWELT_MEASURE_SIZE ?? 100_000);
/** Pixels the scripted scroll moves a frame (3 000: about 30 rows, a hard fling). */
const stepPx = Number(process.env.UMWELT_MEASURE_SCROLL_PX ?? 3000);

const home = tempDir("umwelt-measure-");
const data = path.join(home, "data");
fs.mkdirSync(data, { recursive: true });
execFileSync(cli, ["--db", path.join(data, "memories.sqlite"), "notebook", "--size", String(size)], { stdio: "inherit" });
const env = { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: data };

/** When the running `application` with `env` started, in Unix ms (from /proc), or null. */
function processStart(application, env) {
  const wanted = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const ticks = 100; // USER_HZ on Linux
  // Boot time from the uptime (10 ms steps), not /proc/stat's btime (whole seconds).
  const boot = Date.now() - Number(fs.readFileSync("/proc/uptime", "utf8").split(" ")[0]) * 1000;
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/exe`) !== fs.realpathSync(application)) continue;
      const environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (!wanted.every((w) => environ.includes(w))) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return boot + (Number(fields[19]) / ticks) * 1000;
    } catch {}
  }
  return null;
}

function percentiles(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
  return { n: s.length, p50: at(50), p95: at(95), p99: at(99), max: s[s.length - 1] };
}
const fmt = (p) => `p50 ${p.p50.toFixed(1)} ms, p95 ${p.p95.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms, max ${p.max.toFixed(1)} ms (n ${p.n})`;

const launched = performance.now();
// The app chooses how to draw, as it does for a user (no GPU here: without compositing).
const app = await launch(application, env, { appRendering: true });
const { browser } = app;
await browser.setTimeout({ script: 900_000 });
const results = { size, machine: os.cpus()[0]?.model, cores: os.cpus().length };
try {
  await browser.waitUntil(async () => (await browser.$$("#memories .row-item")).length > 0, { timeout: 60_000, interval: 10 });
  results.firstPageWallMs = performance.now() - launched;
  results.firstPageInPageMs = Number(await (await browser.$("#browser")).getAttribute("data-first-page-ms"));
  // From the app's process start (the kernel's record of it) to the first page on screen.
  const shownAt = await browser.execute(() => performance.timeOrigin + Number(document.querySelector("#browser")?.getAttribute("data-first-page-ms")));
  const started = processStart(application, env);
  if (started !== null) results.firstPageAfterLaunchMs = shownAt - started;
  console.log(`first page: ${results.firstPageAfterLaunchMs?.toFixed(0)} ms after the app's process started; ${results.firstPageInPageMs} ms after the page began loading; ${results.firstPageWallMs.toFixed(0)} ms after launch as seen through WebDriver (includes starting tauri-driver and the session)`);

  // Searches as typed: every prefix of each phrase, as a person types it.
  const phrases = ["landlord heating", "blue flower pot", "train tickets friday", "dentist", "the recipe for lentil soup", "passport", "invoice before the end of the month", "bike lights", "call back", "piano lessons in march"];
  await browser.execute(() => { globalThis.__umweltBrowser.searchTimes.length = 0; });
  for (const phrase of phrases) {
    for (let i = 1; i <= phrase.length; i++) {
      const q = phrase.slice(0, i);
      if (q.endsWith(" ")) continue;
      await browser.executeAsync((q, done) => {
        const b = globalThis.__umweltBrowser;
        const before = b.searchTimes.length;
        b.typed(q);
        const wait = () => (b.searchTimes.length > before && !b.searching ? done() : setTimeout(wait, 5));
        setTimeout(wait, 160);
      }, q);
    }
  }
  const times = await browser.execute(() => globalThis.__umweltBrowser.searchTimes.slice());
  results.search = percentiles(times);
  console.log(`search as you type (request to results on screen): ${fmt(results.search)}`);
  // The engine's own time for the same searches (kept by the app as its real "recall" timings).
  const timings = await browser.executeAsync((done) => window.__TAURI_INTERNALS__.invoke("real_timings", {}).then(done, (e) => done({ error: e })));
  const recall = timings.find?.((t) => t.kind === "recall");
  if (recall) {
    results.searchEngine = percentiles(recall.samples.slice(-times.length).map(([, ms]) => ms));
    console.log(`  of which the engine (query embedded, words and meaning, hits read): ${fmt(results.searchEngine)}`);
  }
  const first = await browser.execute(() => globalThis.__umweltBrowser.hits?.[0]?.memory.text ?? "");
  console.log(`last query's best hit: ${first}`);
  await browser.execute(() => globalThis.__umweltBrowser.typed(""));
  await browser.pause(500);

  // Frames while nothing moves: what the window costs to draw at all.
  const idle = await browser.executeAsync((done) => {
    const gaps = [];
    let last = performance.now();
    const step = (now) => {
      gaps.push(now - last);
      last = now;
      if (gaps.length < 120) requestAnimationFrame(step);
      else done(gaps.slice(1));
    };
    requestAnimationFrame(step);
  });
  results.idleFrames = percentiles(idle);
  console.log(`idle frames: ${fmt(results.idleFrames)}`);

  // Scroll the whole list, `stepPx` a frame, timing every frame.
  const scroll = await browser.executeAsync((stepPx, done) => {
    const el = document.querySelector("#memory-scroller");
    const b = globalThis.__umweltBrowser;
    const gaps = [];
    let last = performance.now();
    const t0 = last;
    const step = (now) => {
      gaps.push(now - last);
      last = now;
      el.scrollTop += stepPx;
      const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - 2;
      if ((atEnd && !b.next && !b.loading) || now - t0 > 600_000) {
        done({ gaps: gaps.slice(1), rows: b.memories.length, seconds: (now - t0) / 1000 });
      } else requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }, stepPx);
  results.scroll = { stepPx, ...percentiles(scroll.gaps), over50: scroll.gaps.filter((g) => g > 50).length, rows: scroll.rows, seconds: scroll.seconds };
  console.log(`scroll (${stepPx} px a frame) through ${scroll.rows} memories in ${scroll.seconds.toFixed(1)} s: frames ${fmt(results.scroll)}, ${results.scroll.over50} over 50 ms`);
} finally {
  await app.close();
  fs.mkdirSync(artifacts, { recursive: true });
  fs.writeFileSync(path.join(artifacts, "browser-scale.json"), JSON.stringify(results, null, 2));
  fs.rmSync(home, { recursive: true, force: true });
}
