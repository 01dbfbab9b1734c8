// Generated from the Rust types by src-tauri/src/bindings.rs. Do not edit.

export type Memory = { id: number, text: string, scope: string, session: string, 
/**
 * Unix time in milliseconds.
 */
created_at: number, 
/**
 * `typed` or `dictated`.
 */
source: string, 
/**
 * The recording a dictated memory was transcribed from.
 */
audio_path: string | null, };

export type Hit = { memory: Memory, 
/**
 * Cosine similarity to the query, -1..1.
 */
similarity: number, 
/**
 * The recency term added to it.
 */
recency: number, 
/**
 * `similarity + recency`: what the hits are ordered by.
 */
score: number, };

export type InputDevice = { name: string, is_default: boolean, };

export type ReembedProgress = { done: number, total: number, };

export type CommandError = { 
/**
 * `input`, `not_found`, `model`, `audio`, `busy` or `internal`.
 */
kind: string, 
/**
 * A sentence for the user.
 */
message: string, };

export type BenchConfig = { 
/**
 * Scenario names; empty means all (or all that need no model, with `fast`).
 */
scenarios: Array<string>, 
/**
 * Corpus sizes for the size-dependent scenarios; empty means each scenario's defaults.
 */
sizes: Array<number>, 
/**
 * Only what needs no model.
 */
fast: boolean, 
/**
 * Measured iterations (default 30; scenarios that rewrite a store use fewer).
 */
iterations: number | null, warmup: number | null, };

export type Progress = { scenario: string, size: number, 
/**
 * Steps done and planned (one step per scenario × size).
 */
done: number, total: number, };

export type Measurement = { scenario: string, 
/**
 * Corpus size (memories, texts or messages; 0 where it does not apply).
 */
size: number, 
/**
 * `on` (every optimisation) or `off` (`UMWELT_PERF=off` paths).
 */
mode: string, iterations: number, p50_ms: number, p95_ms: number, p99_ms: number, min_ms: number, max_ms: number, 
/**
 * Target for p50, where the scenario has one.
 */
target_ms: number | null, 
/**
 * For retrieval with optimisations on: share of queries whose top-10 equals exact search.
 */
agreement: number | null, };

export type Machine = { cpu: string, threads: number, memory_gib: number, os: string, profile: string, sqlite: string, sqlite_vec: string, onnxruntime: string, whisper_cpp: string, perf: string, };

export type Report = { 
/**
 * Format marker, so a foreign JSON file is told apart.
 */
format: string, started_at: number, machine: Machine, 
/**
 * The `umwelt-cli bench …` command that reproduces this run.
 */
command: string, results: Array<Measurement>, };

export type RunSummary = { id: number, started_at: number, command: string, rows: number, 
/**
 * `app` (run here) or `imported`.
 */
origin: string, };

export type Delta = { scenario: string, size: number, mode: string, before_p50_ms: number, after_p50_ms: number, 
/**
 * after / before: below 1 is faster.
 */
ratio: number, 
/**
 * The difference is smaller than the spread (p95 − p50) of either run: call it noise.
 */
within_noise: boolean, };

export type ScenarioView = { name: string, answers: string, needs_model: boolean, default_sizes: Array<number>, };

export type TimingSeries = { kind: string, count: number, p50_ms: number, p95_ms: number, p99_ms: number, 
/**
 * `(unix ms, milliseconds)`, oldest first, at most the latest 500.
 */
samples: Array<[number, number]>, };

export type VoiceInfo = { 
/**
 * `af_heart`
 */
id: string, 
/**
 * `Heart`
 */
name: string, 
/**
 * `American` or `British`
 */
accent: string, 
/**
 * `female` or `male`
 */
gender: string, };

export type SpeechReport = { 
/**
 * From `speak` to the first synthesised sample taken by the output (none if nothing played).
 */
first_audio_ms: number | null, 
/**
 * Time spent in the model.
 */
synth_ms: number, 
/**
 * Speech produced, in seconds (pauses excluded).
 */
audio_seconds: number, 
/**
 * `synth_ms / 1000 / audio_seconds`: under 1 is faster than real time.
 */
rtf: number, 
/**
 * Times the output asked for audio that was not ready yet, after playback began.
 */
underruns: number, 
/**
 * Pauses the voice added between two words to stay ahead of playback, in ms in total
 * (usually one short one after the first phrase; 0 when speaking sentence by sentence).
 */
planned_pause_ms: number, phrases: number, 
/**
 * Stopped before the end.
 */
stopped: boolean, 
/**
 * Whole text spoken in ms, from `speak` to the last sample.
 */
total_ms: number, };

export type SpeakingState = { speaking: boolean, 
/**
 * What is being read (the first 80 characters).
 */
text: string, 
/**
 * Set when the reply has ended: what it took.
 */
report: SpeechReport | null, 
/**
 * Set when it failed: what happened and what to do.
 */
error: string | null, };

export type Settings = { 
/**
 * Voice id for reading aloud (`af_heart`).
 */
voice: string, 
/**
 * Reading speed, 0.5 to 2.0.
 */
speed: number, 
/**
 * Output device by name; `None` follows the system's default.
 */
speaker: string | null, 
/**
 * Input device by name; `None` follows the system's default.
 */
microphone: string | null, 
/**
 * The whisper model dictation uses.
 */
speech_model: SpeechModel, 
/**
 * Names and jargon whisper should expect (passed as its initial prompt).
 */
vocabulary: string, 
/**
 * Unload the speech model after this many idle minutes (0: keep it loaded).
 */
unload_after_minutes: number, 
/**
 * The global dictation shortcut (`Ctrl+Alt+Space`); empty for none.
 */
shortcut: string, 
/**
 * Hold the shortcut to talk, or press once to start and again to stop.
 */
shortcut_mode: ShortcutMode, };

export type SpeechModel = "tiny.en" | "base";

export type ShortcutMode = "toggle" | "push_to_talk";

export type Draft = { 
/**
 * The recording's name (the time it started, in ms).
 */
id: string, 
/**
 * The recording, 16 kHz WAV.
 */
audio_path: string, 
/**
 * What was heard (empty if nothing was, or transcription failed).
 */
text: string, seconds: number, 
/**
 * When it was recorded (ms since the epoch).
 */
created_at: number, 
/**
 * Why there is no text (transcription failed, nothing was heard): offer Retry.
 */
problem: string | null, };

export type Heard = { 
/**
 * The final text of every segment finished so far.
 */
text: string, 
/**
 * The provisional text of the segment being spoken (replaced as it grows, then by its final).
 */
partial: string, 
/**
 * Seconds of audio heard.
 */
seconds: number, 
/**
 * Segments (stretches of speech between pauses) finished so far.
 */
segments: number, };

export type Phase = "idle" | "listening" | "transcribing" | "ready" | "failed";

export type DictationState = { phase: Phase, 
/**
 * The microphone in use (while listening).
 */
device: string | null, draft: Draft | null, message: string | null, };

export type Level = { 
/**
 * Peak of the latest block, 0..1.
 */
peak: number, seconds: number, };

export type MicrophoneLevel = { 
/**
 * The device being checked.
 */
device: string, 
/**
 * Peak of the latest block, 0..1.
 */
peak: number, 
/**
 * The check is over (stopped, timed out, or the device was lost).
 */
done: boolean, 
/**
 * Why it ended, when it was not stopped.
 */
problem: string | null, };

export type Recovery = { 
/**
 * Recordings that became drafts.
 */
recovered: Array<Draft>, 
/**
 * What could not be recovered, and why (each a sentence for the user).
 */
problems: Array<string>, };
