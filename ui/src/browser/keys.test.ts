import { describe, expect, it } from "vitest";
import { KEYS, actionFor, isField, type Action } from "./keys";

describe("actionFor", () => {
  it("maps every KEYS entry to its action", () => {
    for (const k of KEYS) expect(actionFor({ key: k.key }, false)).toBe(k.action);
  });

  it("has one entry per key and per action", () => {
    expect(new Set(KEYS.map((k) => k.key)).size).toBe(KEYS.length);
    expect(new Set(KEYS.map((k) => k.action)).size).toBe(KEYS.length);
    for (const k of KEYS) expect(k.says.length).toBeGreaterThan(0);
  });

  it("maps the arrows to next and previous", () => {
    expect(actionFor({ key: "ArrowDown" }, false)).toBe("next");
    expect(actionFor({ key: "ArrowUp" }, false)).toBe("previous");
    expect(actionFor({ key: "ArrowLeft" }, false)).toBeNull();
    expect(actionFor({ key: "ArrowRight" }, false)).toBeNull();
  });

  it("leaves unknown keys alone", () => {
    for (const key of ["x", "J", "K", "E", "Tab", " ", "Backspace", "F5", "", "ArrowDownX", "toString", "__proto__"]) {
      expect(actionFor({ key }, false)).toBeNull();
    }
  });

  it("takes nothing typed in a field except Escape", () => {
    for (const k of KEYS) {
      expect(actionFor({ key: k.key }, true)).toBe(k.key === "Escape" ? ("back" satisfies Action) : null);
    }
    expect(actionFor({ key: "ArrowDown" }, true)).toBeNull();
    expect(actionFor({ key: "ArrowUp" }, true)).toBeNull();
  });

  it("takes nothing with Ctrl, Alt or Meta held, even Escape", () => {
    for (const mod of [{ ctrlKey: true }, { altKey: true }, { metaKey: true }]) {
      for (const key of [...KEYS.map((k) => k.key), "ArrowDown", "ArrowUp"]) {
        expect(actionFor({ key, ...mod }, false)).toBeNull();
        expect(actionFor({ key, ...mod }, true)).toBeNull();
      }
    }
    expect(actionFor({ key: "j", ctrlKey: false, altKey: false, metaKey: false }, false)).toBe("next");
  });
});

describe("isField", () => {
  const el = (tagName: string, isContentEditable = false) => ({ tagName, isContentEditable }) as unknown as Element;

  it("knows where the user types", () => {
    expect(isField(el("INPUT"))).toBe(true);
    expect(isField(el("TEXTAREA"))).toBe(true);
    expect(isField(el("SELECT"))).toBe(true);
    expect(isField(el("DIV", true))).toBe(true);
  });

  it("is false elsewhere and for no element", () => {
    expect(isField(null)).toBe(false);
    expect(isField(el("DIV"))).toBe(false);
    expect(isField(el("BUTTON"))).toBe(false);
    expect(isField(el("BODY"))).toBe(false);
  });
});
