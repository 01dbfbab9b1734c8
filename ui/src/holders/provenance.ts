// How a holding came to be held, in words: "wrote it", "told by Ada", "witnessed it".
import type { How, Kind } from "../bindings";

/** Anything that says how it is held, and from whom. */
export type Held = { how: How; from: string | null };

export function provenance(h: Held): string {
  switch (h.how) {
    case "told":
      return h.from ? `told by ${h.from}` : "told";
    case "witnessed":
      return "witnessed it";
    default:
      return "knew it first-hand";
  }
}

export function kindLabel(k: Kind): string {
  return k === "fact" ? "fact" : k === "event" ? "event" : "opinion";
}
