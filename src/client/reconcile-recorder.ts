// A loop's records for `setpoint why`, written through the `reconcile` subresource (docs/why-records.md).
// Every reconcile reports; the recorder writes only when the report changes, and a repeated one at most every
// `minIntervalMs` (with how many reconciles it stands for); one write in flight per object, writes on one
// object at least `spacingMs` apart, the latest report written when the spacing ends: at most one write per
// object per second, however often the loop runs or the gap moves.
import type { Logger } from 'pino';
import { isApiStatusError, isNotFound } from './api-status-error.js';
import type { Clock, Timer } from './clock.js';
import { ResourceClient, type ResourceType } from './resource-client.js';
import type { RestClient } from './rest-client.js';

export type LoopOutcome = 'ok' | 'error' | 'waiting';

/** One reconcile's record, as the loop sees it (the server keeps since, count and lastTime). */
export interface LoopReport {
  readonly observedGeneration?: number;
  readonly gap: { readonly desired: unknown; readonly actual: unknown };
  readonly action: string;
  readonly outcome: LoopOutcome;
  readonly message?: string;
  readonly details?: unknown;
  /** The object's uid: the server refuses the record once the name is another object's. */
  readonly uid?: string;
}

export interface ReconcileRecorderOptions {
  /** Carries the leader's fencing token, so a deposed loop's records are refused like its other writes. */
  readonly rest: RestClient;
  readonly controller: string;
  readonly clock: Clock;
  readonly log?: Logger;
  /** A repeated report is written at most this often (count and lastTime catch up then). */
  readonly minIntervalMs?: number;
  /** Two writes on one object are at least this far apart; the latest report is written when it ends. */
  readonly spacingMs?: number;
  /** Objects tracked at most (the oldest are forgotten: their next report is written). */
  readonly maxTracked?: number;
}

interface Tracked {
  /** The last report written (or being written); '' after a failed write, so the next one is written. */
  fingerprint: string;
  outcome: LoopOutcome | '';
  sentAt: number;
  /** Reconciles since the last write, with the current outcome. */
  pending: number;
  inflight: boolean;
  /** The report to write next (the latest due one), held while a write is in flight or spacing runs. */
  queued: LoopReport | undefined;
  timer: Timer | undefined;
}

export const DEFAULT_RECORD_INTERVAL_MS = 30_000;
/** Writes on one object are at least this far apart (a rollout moves its gap every few ms). */
export const DEFAULT_RECORD_SPACING_MS = 1_000;

export class ReconcileRecorder {
  private readonly tracked = new Map<string, Tracked>();
  private readonly clients = new Map<string, ResourceClient>();
  private readonly writes = new Set<Promise<void>>();
  /** Writes sent (for tests and the bench: the rate the bound gives). */
  written = 0;

  constructor(private readonly o: ReconcileRecorderOptions) {}

  private client(type: ResourceType): ResourceClient {
    let c = this.clients.get(type.resource);
    if (!c) {
      c = new ResourceClient(this.o.rest, type);
      this.clients.set(type.resource, c);
    }
    return c;
  }

  /** One reconcile of `namespace/name` gave `report`. Never throws; the write happens in the background. */
  record(type: ResourceType, namespace: string, name: string, report: LoopReport): void {
    const key = `${type.group}/${type.resource}/${namespace}/${name}`;
    const fp = JSON.stringify([report.observedGeneration, report.gap, report.action, report.outcome, report.message, report.details]);
    let t = this.tracked.get(key);
    if (t === undefined) {
      t = { fingerprint: '', outcome: '', sentAt: -Infinity, pending: 0, inflight: false, queued: undefined, timer: undefined };
      this.tracked.set(key, t);
      this.trim();
    }
    if (t.outcome !== report.outcome) t.pending = 0;
    t.outcome = report.outcome;
    t.pending++;
    const due = t.fingerprint !== fp || this.o.clock.now() - t.sentAt >= (this.o.minIntervalMs ?? DEFAULT_RECORD_INTERVAL_MS);
    if (!due) return;
    t.fingerprint = fp;
    t.queued = report;
    this.flush(type, namespace, name, t);
  }

  /** Sends the queued report now, or when the write in flight ends, or when the spacing since the last one does. */
  private flush(type: ResourceType, namespace: string, name: string, t: Tracked): void {
    const next = t.queued;
    if (next === undefined || t.inflight || t.timer !== undefined) return;
    const wait = t.sentAt + (this.o.spacingMs ?? DEFAULT_RECORD_SPACING_MS) - this.o.clock.now();
    if (wait > 0) {
      t.timer = this.o.clock.setTimer(() => {
        t.timer = undefined;
        this.flush(type, namespace, name, t);
      }, wait);
      return;
    }
    t.queued = undefined;
    this.send(type, namespace, name, t, next);
  }

  /** Whether a report on the object was written by this recorder (and not forgotten since). */
  tracks(type: ResourceType, namespace: string, name: string): boolean {
    return this.tracked.has(`${type.group}/${type.resource}/${namespace}/${name}`);
  }

  /** The object is gone: its record went with it. */
  forget(type: ResourceType, namespace: string, name: string): void {
    this.tracked.delete(`${type.group}/${type.resource}/${namespace}/${name}`);
  }

  /** Resolves when every write started so far has settled. */
  async idle(): Promise<void> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }

  private trim(): void {
    const max = this.o.maxTracked ?? 100_000;
    for (const k of this.tracked.keys()) {
      if (this.tracked.size <= max) break;
      this.tracked.delete(k);
    }
  }

  private send(type: ResourceType, namespace: string, name: string, t: Tracked, report: LoopReport): void {
    const reconciles = t.pending;
    t.pending = 0;
    t.sentAt = this.o.clock.now();
    t.inflight = true;
    this.written++;
    const c = this.client(type);
    const body = { apiVersion: 'setpoint.io/v1', kind: 'ReconcileReport', controller: this.o.controller, ...report, reconciles };
    const p = this.o.rest
      .request({ method: 'PUT', path: c.path(namespace, name, 'reconcile'), body })
      .then(
        () => undefined,
        (e: unknown) => {
          // The object is gone, or another by now: nothing to record on. A fenced write: another leader records.
          if (isNotFound(e) || isApiStatusError(e, 'Conflict')) this.o.log?.debug({ object: `${namespace}/${name}`, err: String(e) }, 'reconcile record not written');
          else this.o.log?.warn({ object: `${namespace}/${name}`, err: String(e) }, 'reconcile record not written');
          t.fingerprint = '';
        },
      )
      .finally(() => {
        t.inflight = false;
        this.writes.delete(p);
        // Sent even when the object was forgotten meanwhile: a last report (a binding) follows the one before it.
        this.flush(type, namespace, name, t);
      });
    this.writes.add(p);
  }
}
