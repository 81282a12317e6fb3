// The agent's pod status writer, kubelet's status manager in small: the pod sync hands it the status it
// wants the API to hold and goes on with the next pod; the manager writes it through pods/status in the
// background. Per pod at most one write is in flight and only the latest status waits behind it, so a
// burst of changes becomes one write, a pod's writes never overtake each other, and a slow store delays a
// pod's status without holding up the other pods' syncs. A write that finds the pod gone (404) or replaced
// is dropped (its delete event follows); any other failure keeps the status and tries again after a
// back-off (200 ms doubling to 10 s), so the last status is never lost.
import type { Logger } from 'pino';
import { isNotFound } from '../client/api-status-error.js';
import type { PodStatus } from './pod-types.js';

export interface PodStatusTarget {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
}

export interface StatusManagerDeps {
  /** Writes one pod's status (a merge patch of pods/status with a uid precondition). */
  readonly write: (pod: PodStatusTarget, status: PodStatus) => Promise<void>;
  readonly log: Logger;
  /** The first retry's delay (default 200 ms); it doubles up to maxRetryMs (default 10 s). */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
}

interface Entry {
  readonly pod: PodStatusTarget;
  /** The status last written, as JSON. */
  written?: string | undefined;
  /** The status being written now. */
  inflight?: string | undefined;
  /** The newest status not yet written. */
  pending?: { readonly status: PodStatus; readonly text: string } | undefined;
  /** The running writer, until nothing is pending. */
  writing?: Promise<void> | undefined;
  /** The last write failed: flushed() reports it, and a retry is due. */
  error?: unknown | undefined;
  failures: number;
  retry?: NodeJS.Timeout | undefined;
}

export class StatusManager {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly deps: StatusManagerDeps) {}

  /**
   * Asks for `status` to be written unless the API already holds it: `stale` says the API's copy differs
   * from what we last wrote (another writer changed it), so an unchanged status is written again.
   */
  set(pod: PodStatusTarget, status: PodStatus, stale = false): void {
    let e = this.entries.get(pod.uid);
    if (!e) {
      e = { pod, failures: 0 };
      this.entries.set(pod.uid, e);
    }
    const text = JSON.stringify(status);
    const current = e.inflight ?? e.written;
    if (e.pending?.text === text || (e.pending === undefined && current === text && (!stale || e.inflight !== undefined))) {
      return; // already waiting (a failed write's retry is scheduled), or already there
    }
    e.pending = { status, text };
    if (!e.writing && !e.retry) this.startWriter(e);
  }

  /** Resolves once the pod's latest status is written (or the pod was found gone); rejects if its write failed. */
  async flushed(uid: string): Promise<void> {
    for (;;) {
      const e = this.entries.get(uid);
      if (!e) return;
      if (e.writing) {
        await e.writing;
        continue;
      }
      if (e.pending !== undefined && e.error !== undefined) throw e.error;
      return;
    }
  }

  /** Forgets the pod (removed from the node); a write in flight finishes but leaves nothing behind. */
  forget(uid: string): void {
    const e = this.entries.get(uid);
    if (e?.retry) clearTimeout(e.retry);
    this.entries.delete(uid);
  }

  /** Cancels the retries and waits for the writes in flight (shutdown). */
  async stop(): Promise<void> {
    const all = [...this.entries.keys()];
    const writing = all.map((uid) => this.entries.get(uid)?.writing);
    for (const uid of all) this.forget(uid);
    await Promise.allSettled(writing);
  }

  private startWriter(e: Entry): void {
    e.retry = undefined;
    e.writing = this.drain(e).finally(() => (e.writing = undefined));
  }

  private async drain(e: Entry): Promise<void> {
    while (e.pending !== undefined && this.entries.get(e.pod.uid) === e) {
      const next = e.pending;
      const t0 = performance.now();
      e.inflight = next.text;
      e.pending = undefined;
      try {
        await this.deps.write(e.pod, next.status);
      } catch (err) {
        e.inflight = undefined;
        e.pending ??= next;
        if (isNotFound(err)) {
          this.entries.delete(e.pod.uid);
          return;
        }
        e.error = err;
        e.failures++;
        const delay = Math.min((this.deps.retryMs ?? 200) * 2 ** (e.failures - 1), this.deps.maxRetryMs ?? 10_000);
        this.deps.log.warn({ err: (err as Error).message, pod: `${e.pod.namespace}/${e.pod.name}`, retryInMs: delay }, 'writing the pod status failed; retrying');
        if (this.entries.get(e.pod.uid) === e) e.retry = setTimeout(() => this.startWriter(e), delay);
        return;
      }
      e.inflight = undefined;
      e.error = undefined;
      e.failures = 0;
      e.written = next.text;
      this.deps.log.debug({ pod: `${e.pod.namespace}/${e.pod.name}`, phase: next.status.phase, ms: Math.round(performance.now() - t0) }, 'pod status written');
    }
  }
}
