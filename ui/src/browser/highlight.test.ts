import { describe, expect, it } from "vitest";
import { highlight, queryWords, type Part } from "./highlight";

const hits = (parts: Part[]) => parts.filter((p) => p.hit).map((p) => p.text);
const joined = (parts: Part[]) => parts.map((p) => p.text).join("");

/** mulberry32: a small seeded PRNG, so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("queryWords", () => {
  it("lowercases, drops duplicates and punctuation, and puts the longest first", () => {
    expect(queryWords('Flow "FLOWERS" flow, -x')).toEqual(["flowers", "flow", "x"]);
  });

  it("keeps at most 32 words", () => {
    const words = Array.from({ length: 40 }, (_, i) => "w".repeat(i + 1));
    const got = queryWords(words.join(" "));
    expect(got).toHaveLength(32);
    expect(got[0]).toBe("w".repeat(40));
  });

  it("finds no words in punctuation", () => {
    expect(queryWords(' " * ( ) - : ^ ')).toEqual([]);
  });
});

describe("highlight", () => {
  it("marks whole words, ignoring case, keeping the text's own case", () => {
    expect(highlight("Buy Milk and bread", "milk BREAD")).toEqual([
      { text: "Buy ", hit: false },
      { text: "Milk", hit: true },
      { text: " and ", hit: false },
      { text: "bread", hit: true },
    ]);
  });

  it("marks the prefix of a word that starts with a query word", () => {
    expect(highlight("flowing water", "flow")).toEqual([
      { text: "flow", hit: true },
      { text: "ing water", hit: false },
    ]);
  });

  it("does not match inside a word", () => {
    expect(highlight("overflow", "flow")).toEqual([{ text: "overflow", hit: false }]);
    expect(highlight("reminder", "mind")).toEqual([{ text: "reminder", hit: false }]);
  });

  it("lets the longest query word win", () => {
    expect(highlight("flowers", "flow flowers")).toEqual([{ text: "flowers", hit: true }]);
    expect(highlight("flowers", "flowers flow")).toEqual([{ text: "flowers", hit: true }]);
    expect(highlight("flowerbed", "flow flowe f")).toEqual([
      { text: "flowe", hit: true },
      { text: "rbed", hit: false },
    ]);
  });

  it("returns the text unmarked for an empty query or empty text", () => {
    expect(highlight("some text", "")).toEqual([{ text: "some text", hit: false }]);
    expect(highlight("some text", "  ... ")).toEqual([{ text: "some text", hit: false }]);
    expect(highlight("", "text")).toEqual([{ text: "", hit: false }]);
  });

  it("matches letters with accents and umlauts", () => {
    expect(hits(highlight("Café über Straße", "CAFÉ üB STRASSE straß"))).toEqual(["Café", "üb", "Straß"]);
    expect(hits(highlight("Ärger in Zürich", "ärger zür"))).toEqual(["Ärger", "Zür"]);
    // An accent is not guessed where it is missing.
    expect(hits(highlight("café", "cafe"))).toEqual([]);
    expect(hits(highlight("resume", "résumé"))).toEqual([]);
  });

  it("matches digits and other scripts", () => {
    expect(hits(highlight("Room 101, Москва, 東京", "10 моск 東"))).toEqual(["10", "Моск", "東"]);
  });

  it("never throws on FTS-ish or hostile queries, and keeps the text", () => {
    const text = 'He said "near" - then: OR* (maybe) NEAR(a b) flow-er';
    const queries = ['"', '""', "*", "flow*", "NEAR(", "NEAR(a b, 3)", "OR", "a OR b", "-", "-flow", ":", "col:val",
      "(", ")", "^", "\\", "[a-z]+", ".*", "$&", "a".repeat(10_000), "ab ".repeat(3_334), "\u0000", "\uD800", "🙂"];
    for (const q of queries) {
      const parts = highlight(text, q);
      expect(joined(parts)).toBe(text);
    }
    expect(hits(highlight(text, "NEAR("))).toEqual(["near", "NEAR"]);
    expect(hits(highlight(text, "OR"))).toEqual(["OR"]);
    expect(hits(highlight(text, "-flow*"))).toEqual(["flow"]);
    expect(hits(highlight(text, "a".repeat(10_000)))).toEqual([]);
  });

  it("handles a long text", () => {
    const text = "lorem ipsum dolor ".repeat(5_000);
    const parts = highlight(text, "ips");
    expect(joined(parts)).toBe(text);
    expect(hits(parts)).toHaveLength(5_000);
  });

  it("always cuts the text into parts that join back to it exactly (random strings)", () => {
    const alphabet = [..."abcdeflowrsABCDEFLOW0123456789éÉüÜßöÄçñİıσςΣ東京", " ", " ", "\n", "\t", '"', "*", "(", ")", "-", ":",
      "'", ".", ",", "^", "\\", "🙂", "𝒳", "e\u0301", "\u00a0", "OR", "NEAR"];
    const next = rng(0x5eed);
    const pick = () => alphabet[Math.floor(next() * alphabet.length)] ?? "";
    const str = (max: number) => Array.from({ length: Math.floor(next() * max) }, pick).join("");
    for (let round = 0; round < 2_000; round++) {
      const text = str(60);
      // Half the queries reuse pieces of the text, so there are hits to check.
      const query = next() < 0.5 ? str(12) : `${text.slice(Math.floor(next() * text.length), Math.floor(next() * text.length) + 4)} ${str(4)}`;
      const parts = highlight(text, query);
      const context = JSON.stringify({ text, query });
      expect(joined(parts), context).toBe(text);
      if (text.length > 0) expect(parts.every((p) => p.text.length > 0), context).toBe(true);
      for (let i = 1; i < parts.length; i++) expect(parts[i - 1]?.hit !== parts[i]?.hit, context).toBe(true);
      // Every hit is a query word, found at the start of a word of the text. (Compared by prefix
      // and length: "İ" lowercases to two characters, "i" and a combining dot.)
      const words = queryWords(query);
      let offset = 0;
      for (const p of parts) {
        if (p.hit) {
          const lower = p.text.toLowerCase();
          expect(words.some((w) => w.length === p.text.length && lower.startsWith(w)), context).toBe(true);
          expect(/[\p{L}\p{N}]$/u.test(text.slice(0, offset)), context).toBe(false);
        }
        offset += p.text.length;
      }
    }
  });
});
