// CrashLoopBackOff as kubelet keeps it (k8s.io/client-go/util/flowcontrol Backoff, keyed per container):
// the first restart is immediate and arms the initial delay; each later restart doubles it up to the cap;
// a container that ran longer than the reset window between restarts starts again from the initial delay.
// The wait is measured from the container's finish time.

export interface BackoffSettings {
  /** First delay (kubelet: 10 s). */
  readonly initialMs: number;
  /** Cap (kubelet: MaxContainerBackOff, 300 s). */
  readonly maxMs: number;
  /** Running this long without a restart forgets the back-off (kubelet: 10 minutes). */
  readonly resetMs: number;
}

export const KUBELET_BACKOFF: BackoffSettings = { initialMs: 10_000, maxMs: 300_000, resetMs: 600_000 };

export interface BackoffEntry {
  delayMs: number;
  /** When the entry was last moved (the last restart), ms since the epoch. */
  lastUpdate: number;
}

export class Backoff {
  private readonly entries = new Map<string, BackoffEntry>();

  constructor(readonly settings: BackoffSettings) {}

  /** How much longer a container that finished at `finishedAt` must wait; 0 when it may start now. */
  remaining(key: string, finishedAt: number, now: number): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    if (finishedAt - e.lastUpdate > this.settings.resetMs) return 0;
    return Math.max(0, e.delayMs - (now - finishedAt));
  }

  /** The current delay (for the CrashLoopBackOff message). */
  delay(key: string): number | undefined {
    return this.entries.get(key)?.delayMs;
  }

  /** Records a restart at `now`: arms or doubles the delay. */
  next(key: string, now: number): void {
    const e = this.entries.get(key);
    if (!e || now - e.lastUpdate > this.settings.resetMs) {
      this.entries.set(key, { delayMs: this.settings.initialMs, lastUpdate: now });
      return;
    }
    e.delayMs = Math.min(e.delayMs * 2, this.settings.maxMs);
    e.lastUpdate = now;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  /** For the state file, so an agent restart keeps the crash loop's pace. */
  snapshot(key: string): BackoffEntry | undefined {
    const e = this.entries.get(key);
    return e ? { ...e } : undefined;
  }

  restore(key: string, e: BackoffEntry): void {
    this.entries.set(key, { ...e });
  }
}

/** Go's time.Duration form (`300ms`, `10s`, `1.5s`, `5m0s`), as kubelet prints back-off delays. */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  const secs = (x: number): string => `${Number(x.toFixed(3))}s`;
  if (s < 60) return secs(s);
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${secs(s - m * 60)}`;
  return `${Math.floor(m / 60)}h${m % 60}m${secs(s - m * 60)}`;
}
