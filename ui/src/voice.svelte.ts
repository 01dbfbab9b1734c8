// What is being read aloud, shared by every speaker button, the header's "Speaking…" indicator
// and the settings view; and the saved settings (voice, speed, speaker, microphone).
//
// Each button reads under a key of its own ("memory:12", "result:12", "top-three", "try"): the
// button whose key is `voice.current` shows Stop. A new reply stops the one before (the backend
// does that), so pressing another button simply takes over.
import type { UnlistenFn } from "@tauri-apps/api/event";
import { commands, errorMessage, events, on, type Settings, type SpeechReport } from "./api";

/** The key of the settings view's "Try it" button: its errors show in the settings view. */
export const TRY_IT = "try";

/** A reply that failed, and which button asked for it. */
export type SpeakError = { key: string; message: string };

class Voice {
  /** The button whose text is being read, from the press until the reply ends. */
  current = $state<string | null>(null);
  /** What the last `speaking` event said. */
  announced = $state(false);
  /** The start of what is being read (from the `speaking` event). */
  text = $state("");
  /** The last reply that ended. */
  lastReport = $state<SpeechReport | null>(null);
  /** Milliseconds to the first sound of the last reply that made one. */
  firstSoundMs = $state<number | null>(null);
  error = $state<SpeakError | null>(null);
  /** The saved settings; null until loaded. */
  settings = $state<Settings | null>(null);

  /**
   * Anything being read. A press counts at once (the model may still be starting); the event
   * covers the rest, and a late "stopped" event for a reply already replaced cannot hide the
   * one that replaced it.
   */
  speaking = $derived(this.current !== null || this.announced);

  #seq = 0;

  /** Listen to the `speaking` event and load the settings; returns the unlisten function. */
  async start(): Promise<UnlistenFn> {
    const unlisten = await on(events.speaking, (s) => {
      this.announced = s.speaking;
      if (s.speaking) this.text = s.text;
      if (s.report) {
        this.lastReport = s.report;
        if (s.report.first_audio_ms !== null) this.firstSoundMs = s.report.first_audio_ms;
      }
    });
    try {
      this.settings = await commands.getSettings();
    } catch (e) {
      this.error = { key: "settings", message: errorMessage(e) };
    }
    return unlisten;
  }

  isReading(key: string): boolean {
    return this.current === key;
  }

  /** Read `text` under `key`, or stop it when that button is the one being read. */
  toggle(key: string, text: string): Promise<void> {
    return this.current === key ? this.stop() : this.say(key, text);
  }

  /** Read `text` aloud; resolves when it has been spoken, stopped or refused. */
  async say(key: string, text: string): Promise<void> {
    const seq = ++this.#seq;
    this.current = key;
    this.error = null;
    try {
      const report = await commands.speak(text);
      this.lastReport = report;
      if (report.first_audio_ms !== null) this.firstSoundMs = report.first_audio_ms;
    } catch (e) {
      if (seq === this.#seq) this.error = { key, message: errorMessage(e) };
    } finally {
      if (seq === this.#seq) this.current = null;
    }
  }

  /** Play memory `id`'s recording under `key`, or stop it when that button is the one playing. */
  async togglePlay(key: string, id: number): Promise<void> {
    if (this.current === key) return this.stop();
    const seq = ++this.#seq;
    this.current = key;
    this.error = null;
    try {
      await commands.playRecording(id);
    } catch (e) {
      if (seq === this.#seq) this.error = { key, message: errorMessage(e) };
    } finally {
      if (seq === this.#seq) this.current = null;
    }
  }

  /** Stop whatever is being read. */
  async stop(): Promise<void> {
    // The stopped reply's own answer no longer concerns any button.
    this.#seq++;
    this.current = null;
    try {
      await commands.stopSpeaking();
    } catch (e) {
      this.error = { key: "stop", message: errorMessage(e) };
    }
  }

  dismissError() {
    this.error = null;
  }
}

export const voice = new Voice();

/** "first sound after 420 ms", for tooltips. */
export function firstSoundLabel(ms: number | null): string {
  return ms === null ? "" : `first sound after ${Math.round(ms)} ms`;
}
