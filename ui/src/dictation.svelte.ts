// The dictation in progress and the drafts waiting to be saved, shared by the Record button, the
// draft editors and the header. State comes from the backend's events, so the global shortcut
// and the button show the same thing.
import type { UnlistenFn } from "@tauri-apps/api/event";
import { commands, errorMessage, events, on, type Draft, type Heard, type Memory } from "./api";
import type { DictationState } from "./bindings";
import { browser } from "./browser/browser.svelte";

export type RecordPhase = "idle" | "starting" | "listening" | "transcribing" | "saved";

class Dictating {
  phase = $state<RecordPhase>("idle");
  device = $state<string | null>(null);
  heard = $state<Heard | null>(null);
  /** Peak level, 0..1, and seconds recorded. */
  level = $state(0);
  seconds = $state(0);
  drafts = $state<Draft[]>([]);
  error = $state<string | null>(null);
  /** Why the last dictation ended without Stop, or why its draft has no text. */
  notice = $state<string | null>(null);
  #savedTimer: ReturnType<typeof setTimeout> | undefined;

  async start(): Promise<UnlistenFn> {
    const offs = await Promise.all([
      on(events.dictationState, (s) => {
        switch (s.phase) {
          case "listening":
            this.phase = "listening";
            this.device = s.device;
            this.heard = null;
            this.level = 0;
            this.seconds = 0;
            this.error = null;
            this.notice = null;
            break;
          case "transcribing":
            this.phase = "transcribing";
            break;
          case "ready":
            this.#stopped(s);
            break;
          case "failed":
            this.phase = "idle";
            this.error = s.message;
            break;
          case "idle":
            this.phase = "idle";
        }
      }),
      on(events.dictationHeard, (h) => (this.heard = h)),
      on(events.dictationLevel, (l) => {
        this.level = l.peak;
        this.seconds = l.seconds;
      }),
    ]);
    await this.loadDrafts();
    return () => offs.forEach((f) => f());
  }

  async loadDrafts() {
    try {
      this.drafts = await commands.listDrafts();
    } catch (e) {
      this.error = errorMessage(e);
    }
  }

  /**
   * A dictation stopped and became what Settings → After dictation says: a draft to show, or a
   * memory (typed into another app, saved) to show in the list. Announced as an event and
   * returned by Stop: applying it twice changes nothing.
   */
  #stopped(s: DictationState) {
    this.phase = "idle";
    if (s.draft) this.#upsert(s.draft);
    if (s.memory) {
      browser.added(s.memory);
      this.#showSaved();
    }
    this.notice = s.message;
  }

  /** The Record button says "Saved" for a moment. */
  #showSaved() {
    this.phase = "saved";
    clearTimeout(this.#savedTimer);
    this.#savedTimer = setTimeout(() => {
      if (this.phase === "saved") this.phase = "idle";
    }, 2500);
  }

  #upsert(d: Draft) {
    this.drafts = [...this.drafts.filter((x) => x.id !== d.id), d];
  }

  #prefetched = false;

  /**
   * The Record button was focused or pointed at: have the speech models loaded before it is
   * pressed (once; a failure is left for Record to report).
   */
  prefetch() {
    if (this.#prefetched) return;
    this.#prefetched = true;
    commands.prefetchDictation().catch(() => (this.#prefetched = false));
  }

  /** The Record button: start, or stop if listening. */
  async toggle() {
    this.error = null;
    if (this.phase === "idle" || this.phase === "saved") {
      this.phase = "starting";
      try {
        await commands.startDictation(null);
      } catch (e) {
        this.phase = "idle";
        this.error = errorMessage(e);
      }
    } else if (this.phase === "listening") {
      this.phase = "transcribing";
      try {
        this.#stopped(await commands.stopDictation());
      } catch (e) {
        this.phase = "idle";
        this.error = errorMessage(e);
      }
    }
  }

  /** A draft made elsewhere (a transcribed file). */
  add(draft: Draft) {
    this.#upsert(draft);
  }

  async save(id: string, text: string, keepFile = false): Promise<Memory | null> {
    try {
      const m = await commands.saveDraft(id, text, keepFile);
      this.drafts = this.drafts.filter((d) => d.id !== id);
      this.#showSaved();
      return m;
    } catch (e) {
      this.error = errorMessage(e);
      return null;
    }
  }

  async discard(id: string) {
    try {
      await commands.discardDraft(id);
      this.drafts = this.drafts.filter((d) => d.id !== id);
    } catch (e) {
      this.error = errorMessage(e);
    }
  }

  async retry(id: string) {
    try {
      this.#upsert(await commands.retryDraft(id));
    } catch (e) {
      this.error = errorMessage(e);
    }
  }
}

export const dictating = new Dictating();

/** A level meter reading: the peak in decibels mapped onto 0..1 (−60 dB is empty). */
export function meter(peak: number): number {
  if (peak <= 0) return 0;
  const db = 20 * Math.log10(peak);
  return Math.max(0, Math.min(1, (db + 60) / 60));
}
