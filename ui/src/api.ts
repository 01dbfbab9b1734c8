// Typed calls into the Rust commands (src-tauri/src/commands/). The types come from
// bindings.ts, which is generated from the Rust structs.
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { CommandError, Hit, InputDevice, Memory, Recovery, ReembedProgress } from "./bindings";

export type { CommandError, Hit, InputDevice, Memory, Recovery, ReembedProgress };

/** Re-embedding after a model change (src-tauri/src/events.rs). */
export function onReembedProgress(f: (p: ReembedProgress) => void): Promise<UnlistenFn> {
  return listen<ReembedProgress>("reembed-progress", (e) => f(e.payload));
}

/** Recordings a crash left behind, transcribed at start-up (src-tauri/src/events.rs). */
export function onRecovered(f: (r: Recovery) => void): Promise<UnlistenFn> {
  return listen<Recovery>("recovered", (e) => f(e.payload));
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
};

// Dictation: microphones, the live dictation and its drafts (src-tauri/src/commands/dictation.rs).
import type { DictationState, Draft, Heard, Level, MicrophoneLevel } from "./bindings";

export type { DictationState, Draft, Heard, Level, MicrophoneLevel };

/** A dictation started, stopped, has a draft ready, or failed (src-tauri/src/events.rs). */
export function onDictationState(f: (s: DictationState) => void): Promise<UnlistenFn> {
  return listen<DictationState>("dictation-state", (e) => f(e.payload));
}

/** What the dictation has heard so far: final text and the partial of the words being said. */
export function onDictationHeard(f: (h: Heard) => void): Promise<UnlistenFn> {
  return listen<Heard>("dictation-heard", (e) => f(e.payload));
}

/** The microphone's level while dictating, ten times a second. */
export function onDictationLevel(f: (l: Level) => void): Promise<UnlistenFn> {
  return listen<Level>("dictation-level", (e) => f(e.payload));
}

/** Settings' microphone check: the level ten times a second, and once more when it ends. */
export function onMicrophoneLevel(f: (l: MicrophoneLevel) => void): Promise<UnlistenFn> {
  return listen<MicrophoneLevel>("microphone-level", (e) => f(e.payload));
}

export const dictationApi = {
  microphones: () => invoke<InputDevice[]>("list_microphones"),
  /** Show `device`'s level (the chosen microphone's if null) without recording; its name. */
  checkMicrophone: (device: string | null) => invoke<string>("start_microphone_check", { device }),
  stopMicrophoneCheck: () => invoke<null>("stop_microphone_check"),
  /** The microphone chosen in Settings unless `device` names another. */
  start: (device?: string) => invoke<null>("start_dictation", { device: device ?? null }),
  stop: () => invoke<Draft>("stop_dictation"),
  drafts: () => invoke<Draft[]>("list_drafts"),
  save: (id: string, text: string) => invoke<Memory>("save_draft", { id, text }),
  discard: (id: string) => invoke<null>("discard_draft", { id }),
  retry: (id: string) => invoke<Draft>("retry_draft", { id }),
};

// Reading aloud and the settings that shape it (src-tauri/src/commands/voice.rs).
import type { Settings, SpeakingState, SpeechReport, VoiceInfo } from "./bindings";

export type { Settings, SpeakingState, SpeechReport, VoiceInfo };

/** The voice started or stopped speaking (src-tauri/src/events.rs). */
export function onSpeaking(f: (s: SpeakingState) => void): Promise<UnlistenFn> {
  return listen<SpeakingState>("speaking", (e) => f(e.payload));
}

export const voiceApi = {
  voices: () => invoke<VoiceInfo[]>("list_voices"),
  speakers: () => invoke<string[]>("list_speakers"),
  settings: () => invoke<Settings>("get_settings"),
  saveSettings: (settings: Settings) => invoke<Settings>("save_settings", { settings }),
  /** Resolves when the reply has been spoken or stopped; a new `speak` stops the one before. */
  speak: (text: string) => invoke<SpeechReport>("speak", { text }),
  stop: () => invoke<null>("stop_speaking"),
};

// The performance dashboard (src-tauri/src/commands/perf.rs).
import { Channel } from "@tauri-apps/api/core";
import type { BenchConfig, Delta, Machine, Measurement, Progress, Report, RunSummary, ScenarioView, TimingSeries } from "./bindings";

export type { BenchConfig, Delta, Machine, Measurement, Progress, Report, RunSummary, ScenarioView, TimingSeries };

export const perfApi = {
  scenarios: () => invoke<ScenarioView[]>("bench_scenarios"),
  machine: () => invoke<Machine>("machine"),
  run: (config: BenchConfig, onProgress: (p: Progress) => void) => {
    const channel = new Channel<Progress>();
    channel.onmessage = onProgress;
    return invoke<RunSummary>("run_bench", { config, onProgress: channel });
  },
  cancel: () => invoke<null>("cancel_bench"),
  list: () => invoke<RunSummary[]>("list_runs"),
  get: (id: number) => invoke<Report>("get_run", { id }),
  remove: (id: number) => invoke<null>("delete_run", { id }),
  compare: (before: number, after: number) => invoke<Delta[]>("compare_runs", { before, after }),
  importJson: (json: string) => invoke<RunSummary>("import_run", { json }),
  exportText: (id: number, format: "json" | "markdown") => invoke<string>("export_run", { id, format }),
  save: (id: number, format: "json" | "markdown") => invoke<string>("save_run", { id, format }),
  timings: () => invoke<TimingSeries[]>("real_timings"),
};
