import { describe, expect, it } from "vitest";
import type { Measurement } from "../api";
import { peerPairs } from "./peers";

const m = (scenario: string, size: number, mode: string, p50: number, peer: string | null = null): Measurement => ({
  scenario, size, mode, iterations: 10, p50_ms: p50, p95_ms: p50, p99_ms: p50, min_ms: p50, max_ms: p50,
  target_ms: null, agreement: null, peer, quality: null,
});

describe("peerPairs", () => {
  it("sets Umwelt's p50 over the fastest peer's, with the goal", () => {
    const pairs = peerPairs([
      m("recall_nofilter", 10000, "on", 0.2),
      m("recall_nofilter", 10000, "off", 2.0),
      m("recall_nofilter", 10000, "peer", 3.6, "sqlite-vec"),
      m("recall_nofilter", 10000, "peer", 0.4, "numpy"),
      m("embed", 1, "on", 1.0),
    ]);
    expect(pairs).toHaveLength(1);
    const p = pairs[0]!;
    expect(p.peers.map((x) => x.peer)).toEqual(["numpy", "sqlite-vec"]);
    expect(p.ratio).toBeCloseTo(0.5);
    expect(p.goal).toBe(0.5);
  });
  it("leaves out rows no peer measured", () => {
    expect(peerPairs([m("recall", 1000, "on", 1)])).toEqual([]);
  });
});
