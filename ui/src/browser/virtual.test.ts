import { describe, expect, it } from "vitest";
import { offsets, rowAt, scrollToShow, visibleRange } from "./virtual";

describe("offsets", () => {
  it("gives prefix sums and the total", () => {
    expect(offsets([10, 20, 30])).toEqual({ starts: [0, 10, 30], total: 60 });
    expect(offsets([24, 0, 48])).toEqual({ starts: [0, 24, 24], total: 72 });
    expect(offsets([5])).toEqual({ starts: [0], total: 5 });
  });

  it("is empty for no rows", () => {
    expect(offsets([])).toEqual({ starts: [], total: 0 });
  });
});

describe("rowAt", () => {
  const { starts } = offsets([10, 20, 30]); // [0, 10, 30]

  it("finds the row covering y, exactly at starts and just before them", () => {
    expect(rowAt(starts, 0)).toBe(0);
    expect(rowAt(starts, 9.99)).toBe(0);
    expect(rowAt(starts, 10)).toBe(1);
    expect(rowAt(starts, 29)).toBe(1);
    expect(rowAt(starts, 30)).toBe(2);
  });

  it("clamps before the first row and past the end", () => {
    expect(rowAt(starts, -100)).toBe(0);
    expect(rowAt(starts, 60)).toBe(2);
    expect(rowAt(starts, 1e9)).toBe(2);
  });

  it("is 0 for no rows and for one row", () => {
    expect(rowAt([], 50)).toBe(0);
    expect(rowAt([0], 50)).toBe(0);
    expect(rowAt([0], -1)).toBe(0);
  });

  it("takes the last of rows that start at the same place (zero heights)", () => {
    expect(rowAt([0, 10, 10, 10, 20], 10)).toBe(3);
  });

  it("agrees with a linear scan", () => {
    const heights = Array.from({ length: 200 }, (_, i) => 20 + ((i * 37) % 50));
    const { starts, total } = offsets(heights);
    for (let y = -5; y <= total + 5; y += 7) {
      let want = 0;
      for (let i = 0; i < starts.length; i++) if ((starts[i] ?? 0) <= y) want = i;
      expect(rowAt(starts, y)).toBe(want);
    }
  });
});

describe("visibleRange", () => {
  const { starts } = offsets(new Array<number>(100).fill(10)); // row i is [10i, 10i + 10)

  it("adds overscan rows either side", () => {
    expect(visibleRange(starts, 500, 50, 8)).toEqual({ first: 42, end: 64 });
    expect(visibleRange(starts, 505, 20, 2)).toEqual({ first: 48, end: 55 });
  });

  it("defaults to 8 rows of overscan", () => {
    expect(visibleRange(starts, 500, 50)).toEqual(visibleRange(starts, 500, 50, 8));
  });

  it("clamps at the top, also for a negative scroll (overscroll bounce)", () => {
    expect(visibleRange(starts, 0, 50, 8)).toEqual({ first: 0, end: 14 });
    expect(visibleRange(starts, 30, 50, 8)).toEqual({ first: 0, end: 17 });
    expect(visibleRange(starts, -40, 50, 8)).toEqual({ first: 0, end: 10 });
  });

  it("clamps at the bottom, also past the end", () => {
    expect(visibleRange(starts, 950, 50, 8)).toEqual({ first: 87, end: 100 });
    expect(visibleRange(starts, 5000, 50, 8)).toEqual({ first: 91, end: 100 });
  });

  it("covers every row when the viewport is taller than the list", () => {
    expect(visibleRange(starts, 0, 10_000, 0)).toEqual({ first: 0, end: 100 });
  });

  it("always includes the rows in view", () => {
    for (let top = 0; top < 1000; top += 13) {
      const { first, end } = visibleRange(starts, top, 77, 0);
      expect(first).toBeLessThanOrEqual(Math.floor(top / 10));
      expect(end).toBeGreaterThanOrEqual(Math.min(100, Math.ceil((top + 77) / 10)));
      expect(first).toBeLessThan(end);
    }
  });

  it("is empty for no rows", () => {
    expect(visibleRange([], 0, 500)).toEqual({ first: 0, end: 0 });
    expect(visibleRange([], 300, 500, 0)).toEqual({ first: 0, end: 0 });
  });
});

describe("scrollToShow", () => {
  const heights = new Array<number>(20).fill(10);
  const { starts } = offsets(heights); // row 5 is [50, 60)

  it("scrolls up to a row above the viewport", () => {
    expect(scrollToShow(starts, heights, 5, 70, 30)).toBe(50);
    expect(scrollToShow(starts, heights, 5, 55, 30)).toBe(50); // partly above
  });

  it("scrolls down just enough for a row below the viewport", () => {
    expect(scrollToShow(starts, heights, 5, 0, 30)).toBe(30);
    expect(scrollToShow(starts, heights, 5, 35, 20)).toBe(40); // partly below
  });

  it("stays put when the row is already in view, edges included", () => {
    expect(scrollToShow(starts, heights, 5, 40, 30)).toBe(40);
    expect(scrollToShow(starts, heights, 5, 50, 10)).toBe(50);
    expect(scrollToShow(starts, heights, 5, 30, 30)).toBe(30);
  });

  it("shows the top of a row taller than the viewport", () => {
    const hs = [10, 100, 10];
    const s = offsets(hs).starts;
    expect(scrollToShow(s, hs, 1, 50, 30)).toBe(10);
    expect(scrollToShow(s, hs, 1, 0, 30)).toBe(10);
    expect(scrollToShow(s, hs, 1, 10, 30)).toBe(10);
  });
});
