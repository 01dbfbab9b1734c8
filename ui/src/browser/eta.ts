// Time left for a long job (a transcription, an import), from how fast it has gone so far.

/** Seconds left, or null until there is enough to go on. `done` and `total` are in the job's
 *  own unit (seconds of audio, notes); `elapsedS` is the wall time since it started. */
export function secondsLeft(done: number, total: number, elapsedS: number): number | null {
  if (total <= 0 || done <= 0 || elapsedS < 0.5) return null;
  if (done >= total) return 0;
  const rate = done / elapsedS;
  return (total - done) / rate;
}

/** "about 2 min left", "12 s left", "" while unknown. */
export function describeLeft(s: number | null): string {
  if (s === null) return "";
  if (s < 1) return "almost done";
  if (Math.ceil(s) < 60) return `${Math.ceil(s)} s left`;
  const min = Math.round(s / 60);
  return min < 60 ? `about ${min} min left` : `about ${Math.floor(min / 60)} h ${min % 60} min left`;
}

/** "1:05" for seconds. */
export function clock(s: number): string {
  const t = Math.max(0, Math.floor(s));
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = String(t % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}
