// What the search box shows about a hit: why it ranked where it did, in words.
import type { Why } from "./api";

/** "exact phrase · words #2 · meaning #1 (0.69) · recent 0.10"; a words' rank that counts for
 *  less because the words it shares are common says by how much: "words #1 ×0.20". */
export function whyItRanked(why: Why): string {
  const parts: string[] = [];
  if (why.exact_phrase) parts.push("exact phrase");
  if (why.keyword_rank != null) {
    const w = why.words_weight ?? 1;
    const weight = w < 0.995 ? ` ×${w.toFixed(2)}` : "";
    parts.push(`words #${why.keyword_rank}${weight}`);
  }
  if (why.meaning_rank != null) {
    const similarity = why.similarity != null ? ` (${why.similarity.toFixed(2)})` : "";
    parts.push(`meaning #${why.meaning_rank}${similarity}`);
  }
  parts.push(`recent ${why.recency.toFixed(2)}`);
  return parts.join(" · ");
}
