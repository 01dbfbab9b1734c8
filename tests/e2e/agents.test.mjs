// Settings → Agents in the real window: the snippet an agent's MCP client needs names the
// umwelt-cli beside the app and this data folder; writing is off until the user turns it on;
// then an agent started from that snippet writes a note, which the memory browser shows as the
// agent's and keeps under "By an agent".
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { application, launch, screenshot, tempDir } from "./fixtures.mjs";

/** Start the server the snippet describes, say hello as an MCP client named `name`, call one
 *  tool, and return its answer (`result` or `error`). */
function askAgent(setup, name, tool, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(setup.command, setup.args, { env: { ...process.env, ...setup.env }, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the MCP server did not answer within 30 s: ${out} ${err}`));
    }, 30_000);
    const send = (m) => child.stdin.write(JSON.stringify(m) + "\n");
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      for (const line of out.split("\n").slice(0, -1)) {
        const m = JSON.parse(line);
        if (m.id === 1) {
          send({ jsonrpc: "2.0", method: "notifications/initialized" });
          send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: tool, arguments: args } });
        } else if (m.id === 2) {
          clearTimeout(timer);
          child.stdin.end();
          resolve(m);
        }
      }
      out = out.slice(out.lastIndexOf("\n") + 1);
    });
    child.on("error", reject);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name, version: "1" } },
    });
  });
}

test("Settings → Agents gives the MCP snippet, and an agent writes only once the user allows it", { timeout: 180_000 }, async () => {
  const home = tempDir("umwelt-e2e-agents-");
  const data = path.join(home, "data");
  const app = await launch(application, { XDG_CONFIG_HOME: home, UMWELT_DATA_DIR: data });
  const { browser } = app;
  try {
    await (await browser.$('[data-testid="nav-settings"]')).click();
    const snippet = await browser.$('[data-testid="agent-snippet"]');
    await snippet.waitForDisplayed({ timeout: 30_000 });
    const config = JSON.parse(await snippet.getText());
    const server = config.mcpServers.umwelt;
    assert.equal(server.command, path.join(path.dirname(application), "umwelt-cli"));
    assert.deepEqual(server.args, ["mcp"]);
    assert.equal(server.env.UMWELT_DATA_DIR, data);

    const allow = await browser.$('[data-testid="agents-may-write"]');
    assert.equal(await allow.isSelected(), false, "writing is off until the user turns it on");
    const refused = await askAgent(server, "e2e-agent", "remember", { text: "The spare key is under the blue pot" });
    assert.equal(refused.error?.code, -32602, JSON.stringify(refused));
    assert.match(refused.error.message, /Settings → Agents/);

    await allow.click();
    const status = await browser.$('[data-testid="settings-status"]');
    await browser.waitUntil(async () => (await status.getText()) === "Saved.", { timeout: 10_000 });
    assert.equal(JSON.parse(fs.readFileSync(path.join(data, "settings.json"), "utf8")).agents_may_write, true);
    await screenshot(browser, "settings-agents.png");

    const written = await askAgent(server, "e2e-agent", "remember", { text: "The spare key is under the blue pot" });
    assert.equal(typeof written.result?.structuredContent?.id, "number", JSON.stringify(written));

    // The memory browser shows it as the agent's, and "By an agent" keeps it.
    await (await browser.$("#tab-memories")).click();
    await browser.waitUntil(
      async () => (await browser.execute(() => document.querySelector("#memories")?.textContent ?? "")).includes("spare key"),
      { timeout: 20_000, timeoutMsg: "the agent's note never appeared in the browser" },
    );
    const badge = await browser.execute(() => document.querySelector("#memories .badge.source-agent")?.textContent ?? "");
    assert.equal(badge.trim(), "Agent: e2e-agent");
    // A note typed by hand, then the filter: only the agent's note stays.
    await (await browser.$("#note")).setValue("Buy stamps at the post office");
    await browser.keys("Enter");
    const listed = () => browser.execute(() => document.querySelector("#memories")?.textContent ?? "");
    await browser.waitUntil(async () => (await listed()).includes("Buy stamps"), { timeout: 20_000 });
    await (await browser.$("#filter-source")).selectByAttribute("value", "agent");
    await browser.waitUntil(async () => {
      const text = await listed();
      return text.includes("spare key") && !text.includes("Buy stamps");
    }, { timeout: 10_000, timeoutMsg: "the 'By an agent' filter did not keep only the agent's note" });
  } finally {
    await app.close();
  }
});
