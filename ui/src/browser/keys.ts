// The memory browser's keys. One table, so the help line and the handler never disagree.

export type Action = "search" | "next" | "previous" | "open" | "edit" | "delete" | "record" | "back" | "undo";

export const KEYS: { key: string; action: Action; says: string }[] = [
  { key: "/", action: "search", says: "search" },
  { key: "j", action: "next", says: "next" },
  { key: "k", action: "previous", says: "previous" },
  { key: "Enter", action: "open", says: "open" },
  { key: "e", action: "edit", says: "edit" },
  { key: "Delete", action: "delete", says: "delete" },
  { key: "r", action: "record", says: "record / stop" },
  { key: "z", action: "undo", says: "undo delete" },
  { key: "Escape", action: "back", says: "back" },
];

/** What a key press asks for; null for keys the browser leaves alone. Typing in a field is
 *  never taken, except Escape (which leaves the field). */
export function actionFor(e: { key: string; ctrlKey?: boolean; altKey?: boolean; metaKey?: boolean }, inField: boolean): Action | null {
  if (e.ctrlKey || e.altKey || e.metaKey) return null;
  if (inField && e.key !== "Escape") return null;
  const key = ARROWS[e.key] ?? e.key;
  return KEYS.find((k) => k.key === key)?.action ?? null;
}

/** The arrow keys do what j and k do. */
const ARROWS: Record<string, string> = { ArrowDown: "j", ArrowUp: "k" };

/** Whether an element is somewhere the user types. */
export function isField(el: Element | null): boolean {
  if (!el) return false;
  const tag = el.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (el as HTMLElement).isContentEditable === true;
}
