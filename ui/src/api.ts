// Typed calls into the Rust commands (src-tauri/src/commands.rs). The types come from
// bindings.ts, which is generated from the Rust structs.
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { CommandError, Hit, InputDevice, Memory, ReembedProgress } from "./bindings";

export type { CommandError, Hit, InputDevice, Memory, ReembedProgress };

/** Re-embedding after a model change (src-tauri/src/events.rs). */
export function onReembedProgress(f: (p: ReembedProgress) => void): Promise<UnlistenFn> {
  return listen<ReembedProgress>("reembed-progress", (e) => f(e.payload));
}

/** The message of whatever a command rejected with. */
export function errorMessage(e: unknown): string {
  if (typeof e === "object" && e !== null && "message" in e) return String((e as CommandError).message);
  return String(e);
}

export const api = {
  listMemories: (limit: number, before?: number) => invoke<Memory[]>("list_memories", { limit, before: before ?? null }),
  remember: (text: string) => invoke<Memory>("remember", { text }),
  recall: (query: string, k: number) => invoke<Hit[]>("recall", { query, k }),
  deleteMemory: (id: number) => invoke<null>("delete_memory", { id }),
  listMicrophones: () => invoke<InputDevice[]>("list_microphones"),
  startRecording: (device?: string) => invoke<null>("start_recording", { device: device ?? null }),
  stopRecording: () => invoke<Memory>("stop_recording"),
};
