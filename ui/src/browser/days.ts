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
