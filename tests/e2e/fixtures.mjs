// Test fixtures for driving the real app: an ALSA microphone that speaks a sentence in real
// time, a fresh data directory, and tauri-driver in front of WebKitWebDriver.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { remote } from "webdriverio";

export const root = path.resolve(import.meta.dirname, "../..");
export const artifacts = path.join(root, "test-artifacts");
/** The app under test: $UMWELT_APP, or the release build scripts/setup.sh makes (the binary the
 * package ships), in the scripts' build folder. */
export const application =
  process.env.UMWELT_APP ??
  path.join(process.env.CARGO_TARGET_DIR ?? path.join(os.homedir(), ".cache", "umwelt", "target"), "release", "umwelt");

/** Speech as raw S16_LE 16 kHz mono, made with espeak-ng and sox. */
export function speechRaw(dir, text) {
  const wav = path.join(dir, "speech.wav");
  const raw = path.join(dir, "speech.raw");
  execFileSync("espeak-ng", ["-v", "en-us", "-s", "150", "-w", wav, text]);
  execFileSync("sox", [wav, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", "-t", "raw", raw]);
  return fs.readFileSync(raw);
}

/**
 * A microphone for ALSA: `$XDG_CONFIG_HOME/alsa/asoundrc` makes the default capture device read
 * a FIFO, and a writer feeds it the sentence and then silence at real-time pace, so the app
 * records as it would from a person. Every time the app opens the device the sentence starts again.
 * With `hangAfterS`, the device goes quiet that many seconds after the sentence (it keeps the FIFO
 * open and sends nothing, as an unplugged or hung device would) until stopped.
 */
export function fifoMicrophone(dir, speech, { hangAfterS } = {}) {
  const fifo = path.join(dir, "mic.fifo");
  execFileSync("mkfifo", [fifo]);
  fs.mkdirSync(path.join(dir, "alsa"), { recursive: true });
  fs.writeFileSync(
    path.join(dir, "alsa", "asoundrc"),
    `pcm.!default { type asym capture.pcm "umwelt_test_mic" playback.pcm "null" }
pcm.umwelt_test_mic {
  type plug
  slave { pcm { type file slave.pcm "null" file "/dev/null" infile "${fifo}" format "raw" } format S16_LE rate 16000 channels 1 }
}
`,
  );
  let stopped = false;
  const chunk = 3200; // 100 ms
  const silence = Buffer.alloc(chunk);
  async function serve() {
    while (!stopped) {
      // Opening a FIFO for writing waits for a reader: the app opening the microphone.
      const fd = await new Promise((resolve) => fs.open(fifo, "w", (err, fd) => resolve(err ? null : fd)));
      if (fd === null || stopped) break;
      const t0 = Date.now();
      const hangAt = hangAfterS === undefined ? Infinity : Math.ceil(speech.length / chunk) + hangAfterS * 10;
      for (let i = 0; !stopped; i++) {
        if (i >= hangAt) {
          while (!stopped) await new Promise((r) => setTimeout(r, 100));
          break;
        }
        const start = i * chunk;
        const buf = start < speech.length ? Buffer.concat([speech.subarray(start, start + chunk), silence]).subarray(0, chunk) : silence;
        const ok = await new Promise((resolve) => fs.write(fd, buf, (err) => resolve(!err)));
        if (!ok) break; // the app closed the microphone
        const wait = t0 + (i + 1) * 100 - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      fs.close(fd, () => {});
    }
  }
  serve();
  return {
    stop() {
      stopped = true;
      // Unblock a writer waiting in open().
      try {
        const fd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
        fs.closeSync(fd);
      } catch {}
    },
  };
}

function waitForPort(port, ms) {
  const until = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const s = net.connect(port, "127.0.0.1", () => { s.end(); resolve(); });
      s.on("error", () => (Date.now() > until ? reject(new Error(`nothing listens on ${port}`)) : setTimeout(attempt, 100)));
    };
    attempt();
  });
}

/**
 * Start tauri-driver and a WebDriver session on the app binary, with `env` for the app.
 *
 * Without a GPU the app draws without compositing (src-tauri/src/rendering.rs), and then
 * WebKitWebDriver's screenshots never return (measured: a 15 s wait, then nothing). The tests
 * take screenshots, so they keep compositing on, the way a user who sets
 * WEBKIT_DISABLE_COMPOSITING_MODE=0 would; `{ appRendering: true }` lets the app choose (the
 * measurement of scrolling, which takes no screenshot).
 */
export async function launch(application, env, { appRendering = false } = {}) {
  const port = 4444;
  const rendering = appRendering ? {} : { WEBKIT_DISABLE_COMPOSITING_MODE: "0" };
  const driver = spawn("tauri-driver", ["--port", String(port), "--native-port", "4445"], {
    env: { ...process.env, ...rendering, ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
  await waitForPort(port, 20000);
  const browser = await remote({
    hostname: "127.0.0.1",
    port,
    logLevel: "warn",
    capabilities: {
      browserName: "wry",
      "tauri:options": { application },
      "wdio:enforceWebDriverClassic": true,
    },
  });
  return {
    browser,
    async close() {
      await browser.deleteSession().catch(() => {});
      driver.kill();
      // tauri-driver usually ends the app with the session, but not always: an app left running
      // keeps this test file's output open, and the test runner waits for it for ever.
      await killApps(application, env);
    },
  };
}

/** End every running `application` whose environment holds all of `env` (this test's app). */
async function killApps(application, env) {
  const wanted = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const mine = () =>
    fs.readdirSync("/proc").filter((pid) => {
      if (!/^\d+$/.test(pid)) return false;
      try {
        if (fs.readlinkSync(`/proc/${pid}/exe`) !== fs.realpathSync(application)) return false;
        const environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
        return wanted.every((w) => environ.includes(w));
      } catch {
        return false; // gone, or not ours to read
      }
    });
  const until = Date.now() + 5000;
  while (mine().length && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  for (const pid of mine()) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {}
  }
}

/** Wait until the live text under the Record button (heard while dictating) matches `re`. */
export function waitForLiveText(browser, re, timeout, timeoutMsg = "nothing was heard") {
  return browser.waitUntil(
    async () => re.test(await browser.execute(() => document.querySelector("#live-text")?.textContent ?? "")),
    { timeout, timeoutMsg },
  );
}

export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function screenshot(browser, name) {
  fs.mkdirSync(artifacts, { recursive: true });
  // Let WebKit paint what the DOM already holds.
  await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
  await browser.pause(250);
  const file = path.join(artifacts, name);
  await browser.saveScreenshot(file);
  return file;
}
