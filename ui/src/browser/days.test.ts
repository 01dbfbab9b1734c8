import { describe, expect, it } from "vitest";
import { dayLabel, dayStart, Rows, withDays, type Row } from "./days";

const at = (y: number, m: number, d: number, h = 12, min = 0) => new Date(y, m, d, h, min).getTime();
const weekday = (ms: number) => new Date(ms).toLocaleDateString(undefined, { weekday: "long" });

describe("dayStart", () => {
  it("is local midnight of the same day", () => {
    expect(dayStart(at(2025, 5, 14, 23, 59))).toBe(new Date(2025, 5, 14).getTime());
    expect(dayStart(at(2025, 5, 14, 0, 0))).toBe(new Date(2025, 5, 14).getTime());
  });
});

describe("dayLabel", () => {
  const now = at(2025, 5, 14, 15); // a Saturday afternoon

  it("says Today for any time of today, even later than now", () => {
    expect(dayLabel(at(2025, 5, 14, 0, 0), now)).toBe("Today");
    expect(dayLabel(at(2025, 5, 14, 23, 59), now)).toBe("Today");
  });

  it("says Yesterday for the whole previous day", () => {
    expect(dayLabel(at(2025, 5, 13, 0, 0), now)).toBe("Yesterday");
    expect(dayLabel(at(2025, 5, 13, 23, 59), now)).toBe("Yesterday");
  });

  it("says the weekday for 2 to 6 days ago", () => {
    for (let back = 2; back <= 6; back++) {
      const ms = at(2025, 5, 14 - back, 9);
      const label = dayLabel(ms, now);
      expect(label).toBe(weekday(ms));
      expect(label).not.toMatch(/\d/);
    }
  });

  it("gives a date without the year from 7 days ago in the same year", () => {
    const ms = at(2025, 5, 7, 9);
    const label = dayLabel(ms, now);
    expect(label).toBe(new Date(ms).toLocaleDateString(undefined, { weekday: "short", day: "numeric", month: "long" }));
    expect(label).toMatch(/7/);
    expect(label).not.toMatch(/2025/);
  });

  it("gives a date with the year for another year", () => {
    const ms = at(2023, 2, 3, 9);
    const label = dayLabel(ms, now);
    expect(label).toBe(new Date(ms).toLocaleDateString(undefined, { day: "numeric", month: "long", year: "numeric" }));
    expect(label).toMatch(/2023/);
  });

  it("counts calendar days across a year boundary", () => {
    const newYear = at(2025, 0, 1, 0, 30);
    expect(dayLabel(at(2024, 11, 31, 23, 59), newYear)).toBe("Yesterday");
    expect(dayLabel(at(2024, 11, 31, 0, 1), at(2025, 0, 1, 23, 59))).toBe("Yesterday");
    const dec29 = at(2024, 11, 29, 10);
    expect(dayLabel(dec29, at(2025, 0, 2, 10))).toBe(weekday(dec29));
    // A week or more back, in the previous year: the year is shown.
    const dec20 = at(2024, 11, 20, 10);
    expect(dayLabel(dec20, newYear)).toMatch(/2024/);
  });

  it("counts calendar days across a daylight-saving change (23- and 25-hour days)", () => {
    // Europe's clocks go forward on 2025-03-30 and back on 2025-10-26 (the tests run in Berlin time).
    expect(new Date(2025, 2, 29, 12).getTimezoneOffset()).not.toBe(new Date(2025, 2, 31, 12).getTimezoneOffset());
    expect(dayLabel(at(2025, 2, 30, 0, 0), at(2025, 2, 31, 0, 0))).toBe("Yesterday");
    expect(dayLabel(at(2025, 2, 29, 23, 0), at(2025, 2, 31, 0, 30))).toBe(weekday(at(2025, 2, 29)));
    expect(dayLabel(at(2025, 9, 26, 0, 0), at(2025, 9, 27, 23, 59))).toBe("Yesterday");
    expect(dayLabel(at(2025, 9, 20, 12), at(2025, 9, 26, 23, 59))).toBe(weekday(at(2025, 9, 20)));
    expect(dayLabel(at(2025, 9, 19, 12), at(2025, 9, 26, 0, 0))).not.toBe(weekday(at(2025, 9, 19)));
  });
});

describe("withDays", () => {
  type M = { id: number; t: number };
  const now = at(2025, 5, 14, 15);
  const rows = (items: M[]) => withDays(items, (m) => m.t, (m) => m.id, now);
  const shape = (rs: Row<M>[]) => rs.map((r) => (r.kind === "day" ? `# ${r.label}` : r.item.id));

  it("is empty for no items", () => {
    expect(rows([])).toEqual([]);
  });

  it("puts one heading before each new day, and none within a day", () => {
    const items: M[] = [
      { id: 6, t: at(2025, 5, 14, 14) },
      { id: 5, t: at(2025, 5, 14, 9) },
      { id: 4, t: at(2025, 5, 14, 0, 0) },
      { id: 3, t: at(2025, 5, 13, 23, 59) },
      { id: 2, t: at(2025, 5, 13, 1) },
      { id: 1, t: at(2025, 5, 10, 8) },
    ];
    expect(shape(rows(items))).toEqual(["# Today", 6, 5, 4, "# Yesterday", 3, 2, `# ${weekday(at(2025, 5, 10))}`, 1]);
  });

  it("keys headings by the day's midnight and items by their id", () => {
    const rs = rows([{ id: 42, t: at(2025, 5, 14, 10) }, { id: 7, t: at(2024, 11, 31, 23) }]);
    expect(rs.map((r) => r.key)).toEqual([
      `day-${new Date(2025, 5, 14).getTime()}`,
      "m-42",
      `day-${new Date(2024, 11, 31).getTime()}`,
      "m-7",
    ]);
    expect(new Set(rs.map((r) => r.key)).size).toBe(rs.length);
    const last = rs[2];
    expect(last?.kind === "day" && last.label).toMatch(/2024/);
  });

  it("keeps every item, in order", () => {
    const items: M[] = Array.from({ length: 50 }, (_, i) => ({ id: i, t: now - i * 5 * 3_600_000 }));
    const rs = rows(items);
    expect(rs.flatMap((r) => (r.kind === "item" ? [r.item] : []))).toEqual(items);
    // 50 items five hours apart span about ten days: one heading per distinct day.
    expect(rs.filter((r) => r.kind === "day")).toHaveLength(new Set(items.map((m) => dayStart(m.t))).size);
    expect(rs[0]?.kind).toBe("day");
    for (let i = 1; i < rs.length; i++) expect(rs[i - 1]?.kind === "day" && rs[i]?.kind === "day").toBe(false);
  });

  it("starts a new heading when the day changes back (unsorted input)", () => {
    const items: M[] = [
      { id: 1, t: at(2025, 5, 14, 10) },
      { id: 2, t: at(2025, 5, 13, 10) },
      { id: 3, t: at(2025, 5, 14, 8) },
    ];
    expect(shape(rows(items))).toEqual(["# Today", 1, "# Yesterday", 2, "# Today", 3]);
  });
});

describe("Rows", () => {
  type M = { id: number; at: number };
  const day = (d: number, h = 12) => new Date(2026, 10, d, h).getTime();
  const make = () => new Rows<M>((m) => m.at, (m) => m.id, (r) => (r.kind === "day" ? 10 : 100), () => day(30));

  it("adds only the new rows when a page is appended, and matches a fresh build", () => {
    const list: M[] = [{ id: 5, at: day(29, 15) }, { id: 4, at: day(29, 9) }, { id: 3, at: day(28) }];
    const rows = make();
    rows.follow(list);
    list.push({ id: 2, at: day(28, 8) }, { id: 1, at: day(20) });
    const more = [...list];
    const grown = rows.follow(list);
    const fresh = make().follow(more);
    expect(grown.rows.map((r) => r.key)).toEqual(fresh.rows.map((r) => r.key));
    expect(grown.starts).toEqual(fresh.starts);
    expect(grown.total).toBe(fresh.total);
    expect(grown.rows.filter((r) => r.kind === "day").length).toBe(3);
  });

  it("builds again when an item changes, goes or comes at the top", () => {
    const a: M[] = [{ id: 2, at: day(29) }, { id: 1, at: day(28) }];
    const rows = make();
    rows.follow(a);
    const edited: M[] = [a[0]!, { id: 1, at: day(28) }];
    const out = rows.follow(edited);
    const item = out.rows[out.rows.length - 1];
    expect(item?.kind === "item" && item.item).toBe(edited[1]);
    expect(rows.follow([a[0]!]).rows.length).toBe(2);
    const top = rows.follow([{ id: 3, at: day(30) }, a[0]!]);
    expect(top.rows.map((r) => r.key)).toEqual([`day-${new Date(2026, 10, 30).getTime()}`, "m-3", `day-${new Date(2026, 10, 29).getTime()}`, "m-2"]);
  });
});
