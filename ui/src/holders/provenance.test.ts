import { describe, expect, it } from "vitest";
import { kindLabel, provenance } from "./provenance";

describe("provenance", () => {
  it("names the teller of a told claim", () => {
    expect(provenance({ how: "told", from: "Ada" })).toBe("told by Ada");
    expect(provenance({ how: "told", from: null })).toBe("told");
  });
  it("says how the rest came to be held", () => {
    expect(provenance({ how: "witnessed", from: null })).toBe("witnessed it");
    expect(provenance({ how: "authored", from: null })).toBe("knew it first-hand");
  });
  it("labels kinds", () => {
    expect(kindLabel("opinion")).toBe("opinion");
  });
});
