// Umwelt against its peers (scripts/bench-peers.sh): each of Umwelt's rows beside the best peer
// measured on the same scenario and size in the same run, as a ratio of p50s.
import type { Measurement } from "../api";

/** The goals of issue 17: Umwelt's p50 over the best peer's, at most this. */
export const PEER_GOALS: Record<string, number> = {
  "recall_nofilter 10000": 0.5,
  "recall_nofilter 100000": 0.25,
  "recall_nofilter 1000000": 0.25,
  "embed 1": 0.5,
  "embed 32": 0.5,
};

export type PeerPair = {
  key: string;
  umwelt: Measurement;
  /** Every peer measured on it, fastest first. */
  peers: Measurement[];
  /** Umwelt's p50 over the fastest peer's: below 1, Umwelt is ahead. */
  ratio: number;
  goal: number | null;
};

export function peerPairs(rows: Measurement[]): PeerPair[] {
  const out: PeerPair[] = [];
  for (const u of rows.filter((m) => m.mode === "on" && m.peer === null)) {
    const peers = rows
      .filter((m) => m.peer !== null && m.scenario === u.scenario && m.size === u.size)
      .sort((a, b) => a.p50_ms - b.p50_ms);
    const best = peers[0];
    if (!best) continue;
    const key = `${u.scenario} ${u.size}`;
    out.push({ key, umwelt: u, peers, ratio: u.p50_ms / best.p50_ms, goal: PEER_GOALS[key] ?? null });
  }
  return out;
}
