import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Unit tests for the frontend's pure logic (no DOM, no Tauri): `npm run test:unit`.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
    // A zone with daylight saving, so the day headings are tested across a 23-hour day.
    env: { TZ: "Europe/Berlin" },
  },
});
