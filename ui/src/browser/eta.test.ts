import { describe, expect, it } from "vitest";
import { clock, describeLeft, secondsLeft } from "./eta";

describe("secondsLeft", () => {
  it("is null until there is enough to go on", () => {
    expect(secondsLeft(0, 100, 10)).toBeNull();
    expect(secondsLeft(10, 100, 0)).toBeNull();
    expect(secondsLeft(10, 100, 0.49)).toBeNull();
    expect(secondsLeft(10, 0, 10)).toBeNull();
    expect(secondsLeft(10, -5, 10)).toBeNull();
    expect(secondsLeft(-1, 100, 10)).toBeNull();
  });

  it("is 0 once done (or past done)", () => {
    expect(secondsLeft(100, 100, 5)).toBe(0);
    expect(secondsLeft(150, 100, 5)).toBe(0);
  });

  it("extrapolates from the rate so far", () => {
    expect(secondsLeft(25, 100, 10)).toBe(30);
    expect(secondsLeft(1, 4, 0.5)).toBe(1.5);
    expect(secondsLeft(90, 100, 90)).toBe(10);
  });
});

describe("describeLeft", () => {
  it("is empty while unknown", () => {
    expect(describeLeft(null)).toBe("");
  });

  it("says almost done under a second", () => {
    expect(describeLeft(0)).toBe("almost done");
    expect(describeLeft(0.99)).toBe("almost done");
  });

  it("counts whole seconds, rounded up, under a minute", () => {
    expect(describeLeft(1)).toBe("1 s left");
    expect(describeLeft(12.2)).toBe("13 s left");
    expect(describeLeft(59)).toBe("59 s left");
  });

  it("never says 60 s", () => {
    expect(describeLeft(59.5)).toBe("about 1 min left");
    expect(describeLeft(60)).toBe("about 1 min left");
  });

  it("rounds to minutes under an hour", () => {
    expect(describeLeft(89)).toBe("about 1 min left");
    expect(describeLeft(150)).toBe("about 3 min left");
    expect(describeLeft(59 * 60)).toBe("about 59 min left");
  });

  it("gives hours and minutes from an hour", () => {
    expect(describeLeft(3599)).toBe("about 1 h 0 min left");
    expect(describeLeft(3600)).toBe("about 1 h 0 min left");
    expect(describeLeft(5400)).toBe("about 1 h 30 min left");
    expect(describeLeft(2 * 3600 + 5 * 60 + 10)).toBe("about 2 h 5 min left");
  });
});

describe("clock", () => {
  it("formats minutes and seconds", () => {
    expect(clock(0)).toBe("0:00");
    expect(clock(5)).toBe("0:05");
    expect(clock(59.9)).toBe("0:59");
    expect(clock(65)).toBe("1:05");
    expect(clock(10 * 60)).toBe("10:00");
    expect(clock(3599)).toBe("59:59");
  });

  it("adds hours, padding the minutes", () => {
    expect(clock(3600)).toBe("1:00:00");
    expect(clock(3661)).toBe("1:01:01");
    expect(clock(3600 + 10 * 60 + 7)).toBe("1:10:07");
    expect(clock(25 * 3600)).toBe("25:00:00");
  });

  it("never goes negative", () => {
    expect(clock(-5)).toBe("0:00");
  });
});
