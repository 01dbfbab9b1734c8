// The words of a search, marked in a memory's text. Matching ignores case and accents' absence
// is not guessed; a word matches where a word of the text starts with it (as FTS5's tokens do
// for whole words, and prefixes read naturally while typing).

export type Part = { text: string; hit: boolean };

/** The query's words, longest first (so "flowers" wins over "flow"), at most 32. */
export function queryWords(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].sort((a, b) => b.length - a.length).slice(0, 32);
}

/** `text` cut into parts, the ones that start with a query word marked. */
export function highlight(text: string, query: string): Part[] {
  const words = queryWords(query);
  if (words.length === 0 || text.length === 0) return [{ text, hit: false }];
  const parts: Part[] = [];
  const re = /[\p{L}\p{N}]+/gu;
  let last = 0;
  for (const m of text.matchAll(re)) {
    const lower = m[0].toLowerCase();
    const w = words.find((q) => lower.startsWith(q));
    if (!w) continue;
    const at = m.index ?? 0;
    if (at > last) parts.push({ text: text.slice(last, at), hit: false });
    parts.push({ text: text.slice(at, at + w.length), hit: true });
    last = at + w.length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), hit: false });
  return merge(parts);
}

function merge(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const p of parts) {
    const prev = out[out.length - 1];
    if (prev && prev.hit === p.hit) prev.text += p.text;
    else out.push({ ...p });
  }
  return out;
}
