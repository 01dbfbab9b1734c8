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
