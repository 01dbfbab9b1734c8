// What the UI adds on top of the IPC surface. The commands (`commands.remember(text)`), the events
// (`events.dictationState`) and every type they carry come from bindings.ts, which is generated
// from Rust (src-tauri/src/ipc.rs): no command or event name is written here.
import type { UnlistenFn } from "@tauri-apps/api/event";
import type { CommandError, ErrorKind } from "./bindings";

export { commands, events } from "./bindings";
export type * from "./bindings";

/** A generated event: something that can be listened to. */
type Listenable<T> = { listen: (cb: (e: { payload: T }) => void) => Promise<UnlistenFn> };

/** Call `f` with the payload of every `event` until the returned function is called. */
export function on<T>(event: Listenable<T>, f: (payload: T) => void): Promise<UnlistenFn> {
  return event.listen((e) => f(e.payload));
}

function isCommandError(e: unknown): e is CommandError {
  return typeof e === "object" && e !== null && "kind" in e && "message" in e;
}

/** The message of whatever a command rejected with. */
export function errorMessage(e: unknown): string {
  if (isCommandError(e)) return e.message;
  if (typeof e === "object" && e !== null && "message" in e) return String((e as { message: unknown }).message);
  return String(e);
}

/** The kind of a command's error (`input`, `busy`, …), or null for anything else. */
export function errorKind(e: unknown): ErrorKind | null {
  return isCommandError(e) ? e.kind : null;
}

/**
 * Where an error belongs: an `input` error beside the field it is about, anything else at the
 * top of the view. A `busy` message already says what is busy.
 */
export function fieldError(e: unknown): { field: string | null; top: string | null } {
  const message = errorMessage(e);
  return errorKind(e) === "input" ? { field: message, top: null } : { field: null, top: message };
}
