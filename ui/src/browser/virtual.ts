// A virtualised list of rows of known heights: only the rows in (or near) view are in the page.

/** Where each row starts (prefix sums of the heights), and the total height. */
export function offsets(heights: number[]): { starts: number[]; total: number } {
  const starts = new Array<number>(heights.length);
  let y = 0;
  for (let i = 0; i < heights.length; i++) {
    starts[i] = y;
    y += heights[i] ?? 0;
  }
  return { starts, total: y };
}

/** The index of the row that covers `y` (the last row starting at or before it). */
export function rowAt(starts: number[], y: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  if (hi < 0) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The rows to render for a viewport `[top, top + height)`, with `overscan` rows either side:
 *  `[first, end)`. */
export function visibleRange(starts: number[], top: number, height: number, overscan = 8): { first: number; end: number } {
  const n = starts.length;
  if (n === 0) return { first: 0, end: 0 };
  const first = Math.max(0, rowAt(starts, Math.max(0, top)) - overscan);
  const end = Math.min(n, rowAt(starts, top + height) + 1 + overscan);
  return { first, end };
}

/** The scroll position that brings row `i` fully into a viewport at `top` of `height`, or
 *  `top` itself when it is already in view. */
export function scrollToShow(starts: number[], heights: number[], i: number, top: number, height: number): number {
  const start = starts[i] ?? 0;
  const end = start + (heights[i] ?? 0);
  if (start < top) return start;
  if (end > top + height) return Math.min(start, end - height);
  return top;
}
