// The memory browser's state: the filter, the list a page at a time (newest first), the search
// as you type, and what was deleted and can still be undone. Components read and call it; it
// alone talks to the commands for the list.
import { tick } from "svelte";
import { commands, errorMessage, type Cursor, type Filter, type Memory, type SearchHit } from "../api";

/** The first page is small (the window shows it at once); later pages are larger. */
export const FIRST_PAGE = 60;
export const PAGE = 400;
/** The search waits this long after the last key before it asks. */
export const DEBOUNCE_MS = 150;
/** Hits a search shows as you type (the first screen and a little more); "Show more" asks for
 *  MORE_HITS. Fewer hits are also a faster search: docs/PERFORMANCE.md. */
export const HITS = 20;
export const MORE_HITS = 100;

export const SOURCES: { value: string; label: string }[] = [
  { value: "typed", label: "Typed" },
  { value: "dictated", label: "Dictated" },
  { value: "transcribed", label: "Transcribed file" },
  { value: "imported", label: "Imported" },
  // Any agent's (`agent: NAME`, written over MCP): the filter keeps every agent's.
  { value: "agent", label: "By an agent" },
];

/** What an agent writes is marked `agent: NAME` (the name its MCP client gave). */
const AGENT_PREFIX = "agent: ";

export function sourceLabel(source: string): string {
  if (source.startsWith(AGENT_PREFIX)) return `Agent: ${source.slice(AGENT_PREFIX.length)}`;
  return SOURCES.find((s) => s.value === source)?.label ?? source;
}

/** The source's kind, for its badge's class: `agent` for every agent. */
export function sourceKind(source: string): string {
  return source.startsWith(AGENT_PREFIX) ? "agent" : source;
}

export function emptyFilter(): Filter {
  return { session: null, source: null, from: null, to: null };
}

/** A date field's value (`2026-12-01`) as local midnight in Unix ms; `dayAfter` gives the next
 *  midnight (an inclusive "to" date). */
export function dateToMs(value: string, dayAfter = false): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + (dayAfter ? 1 : 0));
  return d.getTime();
}

class Browser {
  filter = $state<Filter>(emptyFilter());
  query = $state("");
  // Raw: replaced whole, never changed in place, so 100 000 memories are not each wrapped.
  memories = $state.raw<Memory[]>([]);
  /** Counts pages appended to `memories` in place (every other change replaces the array). */
  grown = $state(0);
  next = $state<Cursor | null>(null);
  loaded = $state(false);
  loading = $state(false);
  hits = $state.raw<SearchHit[] | null>(null);
  searching = $state(false);
  /** How many hits the current query asks for (HITS, or MORE_HITS after "Show more"). */
  k = $state(HITS);
  error = $state<string | null>(null);
  /** Milliseconds from each search's request to its results on screen, over IPC, as the
   *  window saw them (the newest last; `tests/e2e/measure/` reads them). */
  searchTimes: number[] = [];
  /** When the first page was on screen, in ms since the page started loading. */
  firstPageMs = $state<number | null>(null);
  /** Deleted moments ago: what Undo brings back. */
  deleted = $state<Memory | null>(null);

  #generation = 0;
  #searchSeq = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  get filtered(): boolean {
    const f = this.filter;
    return f.session !== null || f.source !== null || f.from !== null || f.to !== null;
  }

  /** Start the list again from the newest (the filter changed, or something was imported). */
  async reload() {
    const generation = ++this.#generation;
    this.loading = true;
    try {
      const page = await commands.listMemories(this.filter, FIRST_PAGE, null);
      if (generation !== this.#generation) return;
      this.memories = page.memories;
      this.next = page.next;
      this.error = null;
      if (this.firstPageMs === null) this.firstPageMs = performance.now();
    } catch (e) {
      if (generation === this.#generation) this.error = errorMessage(e);
    } finally {
      if (generation === this.#generation) {
        this.loading = false;
        this.loaded = true;
      }
    }
    if (this.query.trim()) this.searchNow();
  }

  /** The next page, if there is one and none is on its way. */
  async more() {
    if (this.loading || !this.next) return;
    const generation = this.#generation;
    this.loading = true;
    try {
      const page = await commands.listMemories(this.filter, PAGE, this.next);
      if (generation !== this.#generation) return;
      // Appended in place (a new 100 000-long array per page made the garbage collector stall
      // a frame now and then); `grown` tells the list.
      this.memories.push(...page.memories);
      this.grown++;
      this.next = page.next;
    } catch (e) {
      if (generation === this.#generation) this.error = errorMessage(e);
    } finally {
      if (generation === this.#generation) this.loading = false;
    }
  }

  setFilter(f: Partial<Filter>) {
    this.filter = { ...this.filter, ...f };
    void this.reload();
  }

  clearFilter() {
    this.filter = emptyFilter();
    void this.reload();
  }

  /** The query changed: search once the typing pauses. */
  typed(q: string) {
    this.query = q;
    this.k = HITS;
    clearTimeout(this.#timer);
    if (!q.trim()) {
      this.#searchSeq++;
      this.hits = null;
      this.searching = false;
      return;
    }
    this.#timer = setTimeout(() => this.searchNow(), DEBOUNCE_MS);
  }

  async searchNow() {
    clearTimeout(this.#timer);
    const q = this.query.trim();
    if (!q) return;
    const seq = ++this.#searchSeq;
    this.searching = true;
    const t0 = performance.now();
    try {
      const found = await commands.search(q, this.k, this.filter);
      if (seq === this.#searchSeq) {
        this.hits = found;
        this.error = null;
        // From asking to the results on screen.
        await tick();
        this.searchTimes.push(performance.now() - t0);
        if (this.searchTimes.length > 1000) this.searchTimes.shift();
      }
    } catch (e) {
      if (seq === this.#searchSeq) this.error = errorMessage(e);
    } finally {
      if (seq === this.#searchSeq) this.searching = false;
    }
  }

  /** Ask the same query for more hits. */
  showMore() {
    this.k = MORE_HITS;
    void this.searchNow();
  }

  clearSearch() {
    this.typed("");
  }

  /** A new memory (typed, saved from a draft): at the top, if the filter keeps it. */
  added(m: Memory) {
    if (keeps(this.filter, m)) this.memories = [m, ...this.memories.filter((x) => x.id !== m.id)];
  }

  /** A memory changed (edited, restored): wherever it is shown. */
  changed(m: Memory) {
    this.memories = this.memories.map((x) => (x.id === m.id ? m : x));
    if (this.hits) this.hits = this.hits.map((h) => (h.memory.id === m.id ? { ...h, memory: m } : h));
  }

  /** Delete a memory: it leaves the list now, and can be undone for a while. */
  async remove(m: Memory): Promise<boolean> {
    try {
      await commands.deleteMemory(m.id);
      this.memories = this.memories.filter((x) => x.id !== m.id);
      if (this.hits) this.hits = this.hits.filter((h) => h.memory.id !== m.id);
      this.deleted = m;
      return true;
    } catch (e) {
      this.error = errorMessage(e);
      return false;
    }
  }

  async undo() {
    const m = this.deleted;
    if (!m) return;
    this.deleted = null;
    try {
      const back = await commands.undoDelete(m.id);
      // Back where it was in the list (newest first).
      if (keeps(this.filter, back)) {
        const i = this.memories.findIndex((x) => x.created_at < back.created_at || (x.created_at === back.created_at && x.id < back.id));
        const at = i < 0 ? this.memories.length : i;
        if (i >= 0 || !this.next) this.memories = [...this.memories.slice(0, at), back, ...this.memories.slice(at)];
      }
      if (this.query.trim()) void this.searchNow();
    } catch (e) {
      this.error = errorMessage(e);
    }
  }
}

/** Whether `filter` keeps `m` (as the engine's `Filter::keeps`). */
export function keeps(f: Filter, m: Memory): boolean {
  return (f.session === null || m.session === f.session)
    && (f.source === null || m.source === f.source)
    && (f.from === null || m.created_at >= f.from)
    && (f.to === null || m.created_at < f.to);
}

export const browser = new Browser();

// The measurement scripts (tests/e2e/measure/) read what the window saw from here.
(globalThis as { __umweltBrowser?: typeof browser }).__umweltBrowser = browser;
