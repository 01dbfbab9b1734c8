// Work on the user's files: transcribing an audio file into a draft, importing notes, exporting
// every memory. One job at a time (the engine says so too), with progress, time left and Cancel.
import { Channel } from "@tauri-apps/api/core";
import { commands, errorKind, errorMessage, type Draft, type ExportAs, type FileProgress, type ImportProgress, type ImportReport } from "../api";
import { secondsLeft } from "./eta";

/** What a dropped or chosen path is, by its extension. */
export function kindOf(path: string, audio: string[]): "audio" | "notes" {
  const ext = path.split(/[\\/]/).pop()?.split(".").slice(1).pop()?.toLowerCase() ?? "";
  return audio.includes(ext) ? "audio" : "notes";
}

class Files {
  /** The running job: what it is, how far, since when. */
  job = $state<{ what: "transcribe" | "import"; name: string; done: number; total: number; started: number; unit: "s" | "notes" } | null>(null);
  /** Seconds left, updated as progress comes. */
  left = $state<number | null>(null);
  error = $state<string | null>(null);
  notice = $state<string | null>(null);
  report = $state<ImportReport | null>(null);
  /** An export that would replace a file already there, waiting for the user to say yes. */
  replacing = $state<{ format: ExportAs; destination: string; message: string } | null>(null);
  audioExtensions = $state<string[]>([]);

  async load() {
    try {
      this.audioExtensions = await commands.audioExtensions();
    } catch (e) {
      this.error = errorMessage(e);
    }
  }

  #progress(done: number, total: number) {
    if (!this.job) return;
    this.job = { ...this.job, done, total };
    this.left = secondsLeft(done, total, (performance.now() - this.job.started) / 1000);
  }

  /** Transcribe an audio file; the draft it makes is returned (null if cancelled or failed). */
  async transcribe(path: string): Promise<Draft | null> {
    const name = path.split(/[\\/]/).pop() ?? path;
    this.error = null;
    this.notice = null;
    this.job = { what: "transcribe", name, done: 0, total: 0, started: performance.now(), unit: "s" };
    this.left = null;
    const onProgress = new Channel<FileProgress>();
    onProgress.onmessage = (p) => this.#progress(p.done_s, p.total_s);
    try {
      const draft = await commands.transcribeFile(path, onProgress);
      this.notice = draft.problem
        ? `${name}: ${draft.problem}. The draft is below.`
        : `${name} is transcribed: read the draft below, fix what needs fixing, and save it.`;
      return draft;
    } catch (e) {
      if (errorKind(e) === "cancelled") this.notice = `Transcribing ${name} was cancelled; nothing was kept.`;
      else this.error = errorMessage(e);
      return null;
    } finally {
      this.job = null;
    }
  }

  /** Import notes: everything or, on a failure or Cancel, nothing. */
  async import(paths: string[]): Promise<ImportReport | null> {
    if (paths.length === 0) return null;
    const first = paths[0] ?? "";
    const name = paths.length === 1 ? (first.split(/[\\/]/).pop() ?? first) : `${paths.length} items`;
    this.error = null;
    this.notice = null;
    this.report = null;
    this.job = { what: "import", name, done: 0, total: 0, started: performance.now(), unit: "notes" };
    this.left = null;
    const onProgress = new Channel<ImportProgress>();
    onProgress.onmessage = (p) => this.#progress(p.done, p.total);
    try {
      const report = await commands.importNotes(paths, onProgress);
      this.report = report;
      return report;
    } catch (e) {
      if (errorKind(e) === "cancelled") this.notice = "The import was cancelled; nothing was imported.";
      else this.error = `${errorMessage(e)} Nothing was imported.`;
      return null;
    } finally {
      this.job = null;
    }
  }

  async cancel() {
    await commands.cancelJob();
  }

  /** Export everything; a file already there is replaced only once the user has said so
   * (`overwrite`: they confirmed it here, or in the system's save dialog). */
  async export(format: ExportAs, destination: string, overwrite = false) {
    this.error = null;
    this.notice = null;
    this.replacing = null;
    try {
      const done = await commands.exportMemories(format, destination, overwrite);
      this.notice = `Exported ${done.memories} ${done.memories === 1 ? "memory" : "memories"} to ${done.path}`;
    } catch (e) {
      if (errorKind(e) === "exists") this.replacing = { format, destination, message: errorMessage(e) };
      else this.error = errorMessage(e);
    }
  }
}

export const files = new Files();
