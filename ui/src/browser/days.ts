// The memory list's day headings: "Today", "Yesterday", a weekday within the week, then dates.

/** Midnight (local time) of the day `ms` falls in. */
export function dayStart(ms: number): number {
  const d = new Date(ms);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** The heading for the day `ms` falls in, seen from `now`. */
export function dayLabel(ms: number, now: number = Date.now()): string {
  const day = dayStart(ms);
  const today = dayStart(now);
  // Days between, counted by calendar date (a DST change makes a day 23 or 25 hours long).
  const days = Math.round((today - day) / 86_400_000);
  if (days === 0) return "Today";
  if (days === 1) return "Yesterday";
  const d = new Date(ms);
  if (days > 1 && days < 7) return d.toLocaleDateString(undefined, { weekday: "long" });
  const sameYear = d.getFullYear() === new Date(now).getFullYear();
  return d.toLocaleDateString(undefined, sameYear
    ? { weekday: "short", day: "numeric", month: "long" }
    : { day: "numeric", month: "long", year: "numeric" });
}

/** A row of the list: a day's heading, or a memory. */
export type Row<T> = { kind: "day"; key: string; label: string } | { kind: "item"; key: string; item: T };

/** Items (newest first) as rows with a heading before each new day. */
export function withDays<T>(items: T[], at: (t: T) => number, id: (t: T) => string | number, now: number = Date.now()): Row<T>[] {
  const rows: Row<T>[] = [];
  let last = NaN;
  for (const item of items) {
    const day = dayStart(at(item));
    if (day !== last) {
      rows.push({ kind: "day", key: `day-${day}`, label: dayLabel(day, now) });
      last = day;
    }
    rows.push({ kind: "item", key: `m-${id(item)}`, item });
  }
  return rows;
}

/** Rows with headings, kept in step with a list that mostly grows at its end (pages appended
 *  while scrolling): `follow` adds only the new items' rows when it is given the same array,
 *  grown in place, and builds them all again for any other array (an edit, a delete, a new
 *  note, a filter: each makes a new array). */
export class Rows<T> {
  rows: Row<T>[] = [];
  heights: number[] = [];
  starts: number[] = [];
  total = 0;
  #items: T[] = [];
  #count = 0;
  #lastDay = NaN;

  constructor(
    private at: (t: T) => number,
    private id: (t: T) => string | number,
    private height: (r: Row<T>) => number,
    private now: () => number = Date.now,
  ) {}

  follow(items: T[]): { rows: Row<T>[]; heights: number[]; starts: number[]; total: number } {
    // The same array, longer: a page appended in place. Any other array: built again.
    const appended = items === this.#items;
    if (!appended) {
      this.rows = [];
      this.heights = [];
      this.starts = [];
      this.total = 0;
      this.#lastDay = NaN;
      this.#count = 0;
    }
    const now = this.now();
    for (let i = this.#count; i < items.length; i++) {
      const item = items[i] as T;
      const day = dayStart(this.at(item));
      if (day !== this.#lastDay) {
        this.#push({ kind: "day", key: `day-${day}`, label: dayLabel(day, now) });
        this.#lastDay = day;
      }
      this.#push({ kind: "item", key: `m-${this.id(item)}`, item });
    }
    this.#items = items;
    this.#count = items.length;
    return { rows: this.rows, heights: this.heights, starts: this.starts, total: this.total };
  }

  #push(r: Row<T>) {
    const h = this.height(r);
    this.rows.push(r);
    this.heights.push(h);
    this.starts.push(this.total);
    this.total += h;
  }
}
