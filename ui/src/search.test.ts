import { describe, expect, it } from "vitest";
import type { Why } from "./api";
import { whyItRanked } from "./search";

const why = (w: Partial<Why>): Why => ({
  exact_phrase: false,
  keyword_rank: null,
  bm25: null,
  words_weight: 1,
  meaning_rank: null,
  similarity: null,
  recency: 0,
  ...w,
});

describe("whyItRanked", () => {
  it("says every reason, in order", () => {
    expect(whyItRanked(why({ exact_phrase: true, keyword_rank: 2, bm25: -3.2, meaning_rank: 1, similarity: 0.6912, recency: 0.1 })))
      .toBe("exact phrase · words #2 · meaning #1 (0.69) · recent 0.10");
  });

  it("always gives the recency, with two decimals", () => {
    expect(whyItRanked(why({}))).toBe("recent 0.00");
    expect(whyItRanked(why({ recency: 0.0456 }))).toBe("recent 0.05");
  });

  it("leaves out what did not count", () => {
    expect(whyItRanked(why({ keyword_rank: 3, recency: 0.02 }))).toBe("words #3 · recent 0.02");
    expect(whyItRanked(why({ meaning_rank: 4, similarity: 0.5, recency: 0.02 }))).toBe("meaning #4 (0.50) · recent 0.02");
    expect(whyItRanked(why({ exact_phrase: true }))).toBe("exact phrase · recent 0.00");
  });

  it("says how little a words' rank counted when the shared words are common", () => {
    expect(whyItRanked(why({ keyword_rank: 1, bm25: -0.4, words_weight: 0.2, recency: 0.02 }))).toBe("words #1 ×0.20 · recent 0.02");
    expect(whyItRanked(why({ keyword_rank: 1, words_weight: 0.999 }))).toBe("words #1 · recent 0.00");
  });

  it("gives a meaning rank without a similarity when there is none", () => {
    expect(whyItRanked(why({ meaning_rank: 1 }))).toBe("meaning #1 · recent 0.00");
  });

  it("shows a rank or similarity of 0 (present, not missing)", () => {
    expect(whyItRanked(why({ keyword_rank: 0, meaning_rank: 0, similarity: 0 }))).toBe("words #0 · meaning #0 (0.00) · recent 0.00");
  });

  it("ignores a similarity without a meaning rank, and the bm25", () => {
    expect(whyItRanked(why({ similarity: 0.9, bm25: -1 }))).toBe("recent 0.00");
  });
});
