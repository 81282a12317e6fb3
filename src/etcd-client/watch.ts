// One watch as its consumer sees it: batches of events in revision order, progress notifications, and at
// most one error (compaction, or the server's cancel) at the end. The watch remembers the last revision it
// has taken in, so the stream under it can be re-created anywhere from the next one — after a reconnect, or
// after the watch was set aside because its consumer fell behind: past a bound on what it holds, the watch
// is canceled on the server and asked for again from history once the consumer has caught up, so a slow
// consumer costs the store a catch-up, never this process unbounded memory.
import { EtcdClientError } from './errors.js';
import type { WireEvent } from './proto.js';
import { toKeyValue } from './types.js';
import type { KeyValue } from './types.js';

export interface WatchEvent {
  readonly type: 'PUT' | 'DELETE';
  readonly kv: KeyValue;
  /** The key before this event (when the watch asked for prevKv and history still had it). */
  readonly prevKv?: KeyValue;
}

/**
 * Events of one or more whole revisions (a revision is never split across batches), or — with no events and
 * `progress` set — word that every event up to `revision` has been delivered. With `requested` also set it
 * is the store's answer to a progress request, which stores with etcd-io/etcd#15220 (etcd before 3.4.31 and
 * 3.5.13) may send ahead of events up to `revision` still on their way: a claim, not a fact, unless the
 * client was told to trust such answers.
 */
export interface WatchBatch {
  readonly events: readonly WatchEvent[];
  readonly revision: number;
  readonly progress: boolean;
  readonly requested: boolean;
}

export interface WatchSpec {
  readonly key: Buffer;
  readonly rangeEnd?: Buffer;
  /** Inclusive; 0 = from the revision after the store's current one. */
  readonly startRevision: number;
  readonly prevKv: boolean;
  readonly progressNotify: boolean;
  readonly filters?: readonly ('NOPUT' | 'NODELETE')[];
}

export interface WatchLimits {
  /**
   * Past either bound the watch is set aside on the server until its consumer drains half of it. It holds
   * at most the bound plus the one revision that crossed it: a response that would carry it further is cut
   * between revisions, and its rest is asked for again from history.
   */
  readonly maxBufferedEvents: number;
  readonly maxBufferedBytes: number;
}

/** What the stream that carries a watch does for it. */
export interface WatchCarrier {
  suspend(w: ClientWatch): void;
  resume(w: ClientWatch): void;
  cancel(w: ClientWatch): void;
}

export type MuxState = 'queued' | 'creating' | 'active' | 'idle' | 'done';

function eventBytes(e: WireEvent): number {
  return 64 + (e.kv ? e.kv.key.length + e.kv.value.length : 0) + (e.prevKv ? e.prevKv.key.length + e.prevKv.value.length : 0);
}

export class ClientWatch implements AsyncIterable<WatchBatch> {
  // ---- kept by the carrier ----
  muxState: MuxState = 'queued';
  serverId: string | undefined;
  /** A cancel or suspend asked for while the create was in flight, done when it is answered. */
  afterCreate: 'cancel' | 'suspend' | undefined;

  /** Every event up to this revision has been taken in (0: none yet, and the watch started "from now"). */
  private last: number;
  private started: boolean;
  private readonly buffer: { readonly batch: WatchBatch; readonly bytes: number }[] = [];
  private bufferedEvents = 0;
  private bufferedBytes = 0;
  private suspended = false;
  private suspensions = 0;
  private error: EtcdClientError | undefined;
  private finished = false;
  private wake: (() => void) | undefined;

  constructor(
    readonly spec: WatchSpec,
    private readonly carrier: WatchCarrier,
    private readonly limits: WatchLimits,
  ) {
    this.started = spec.startRevision > 0;
    this.last = spec.startRevision > 0 ? spec.startRevision - 1 : 0;
  }

  /** The last revision taken in: a new watch from lastRevision + 1 misses and repeats nothing. */
  get lastRevision(): number {
    return this.last;
  }

  /** The start revision for (re-)creating the watch on a stream. */
  nextStartRevision(): number {
    return this.started ? this.last + 1 : 0;
  }

  /** What the watch holds for its consumer now, and how often it was set aside for falling behind. */
  get stats(): { bufferedEvents: number; bufferedBytes: number; suspensions: number } {
    return { bufferedEvents: this.bufferedEvents, bufferedBytes: this.bufferedBytes, suspensions: this.suspensions };
  }

  get isDone(): boolean {
    return this.finished || this.error !== undefined;
  }

  // ---- from the carrier ----

  /** The create was answered: a watch "from now" starts after the store's revision then. */
  created(headerRevision: number): void {
    if (!this.started) {
      this.started = true;
      this.last = headerRevision;
    }
  }

  deliver(wire: readonly WireEvent[]): void {
    if (this.isDone) return;
    const events: WatchEvent[] = [];
    let bytes = 0;
    for (const e of wire) {
      if (!e.kv) continue;
      const kv = toKeyValue(e.kv);
      // Anything at or below the last revision taken in came before, on an earlier stream.
      if (kv.modRevision <= this.last) continue;
      // One response may hold a thousand revisions (a catch-up): past the bound the rest is left on the
      // server, cut between revisions, and asked for again once the consumer has drained the watch.
      const prev = events.at(-1);
      if (prev && prev.kv.modRevision !== kv.modRevision && this.over(events.length, bytes)) break;
      events.push(e.prevKv && e.prevKv.key.length > 0 ? { type: e.type, kv, prevKv: toKeyValue(e.prevKv) } : { type: e.type, kv });
      bytes += eventBytes(e);
    }
    const lastEvent = events.at(-1);
    if (!lastEvent) return;
    // Events of a revision after `last` all come in this batch, so `last` moves past whole revisions only.
    this.last = lastEvent.kv.modRevision;
    this.push({ events, revision: this.last, progress: false, requested: false }, events.length, bytes);
  }

  /** A progress notification the watch can rely on: it resumes after `revision` from now on. */
  progress(revision: number): void {
    // One at the revision already reached still tells the consumer that nothing newer is missing.
    if (this.isDone || revision < this.last) return;
    this.last = revision;
    this.pushProgress(revision, false);
  }

  /** An answer to a progress request that may have overtaken events: passed on, the resume point kept. */
  progressClaim(revision: number): void {
    if (this.isDone || revision < this.last) return;
    this.pushProgress(revision, true);
  }

  private pushProgress(revision: number, requested: boolean): void {
    const tail = this.buffer.at(-1);
    const batch = { events: [], revision, progress: true, requested };
    // Consecutive notifications of one kind say the same thing; the newest is enough.
    if (tail?.batch.progress && tail.batch.requested === requested) this.buffer[this.buffer.length - 1] = { batch, bytes: tail.bytes };
    else this.push(batch, 0, 16);
  }

  fail(e: EtcdClientError): void {
    if (this.isDone) return;
    this.error = e;
    this.muxState = 'done';
    this.wakeUp();
  }

  /** Ended by the client closing: the consumer's loop just finishes. */
  end(): void {
    if (this.isDone) return;
    this.finished = true;
    this.muxState = 'done';
    this.wakeUp();
  }

  // ---- for the consumer ----

  cancel(): void {
    if (this.isDone) return;
    this.finished = true;
    this.buffer.length = 0;
    this.carrier.cancel(this);
    this.wakeUp();
  }

  async next(): Promise<IteratorResult<WatchBatch>> {
    for (;;) {
      const entry = this.buffer.shift();
      if (entry) {
        this.bufferedEvents -= entry.batch.events.length;
        this.bufferedBytes -= entry.bytes;
        if (this.suspended && this.belowLowWater()) {
          this.suspended = false;
          this.carrier.resume(this);
        }
        return { value: entry.batch, done: false };
      }
      if (this.error) {
        const e = this.error;
        this.finished = true;
        this.error = undefined;
        throw e;
      }
      if (this.finished) return { value: undefined, done: true };
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchBatch> {
    return {
      next: () => this.next(),
      return: () => {
        this.cancel();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private push(b: WatchBatch, events: number, bytes: number): void {
    this.buffer.push({ batch: b, bytes });
    this.bufferedEvents += events;
    this.bufferedBytes += bytes;
    if (!this.suspended && this.over(0, 0)) {
      this.suspended = true;
      this.suspensions++;
      this.carrier.suspend(this);
    }
    this.wakeUp();
  }

  /** Whether the watch holds more than its bound, with `events` and `bytes` more. */
  private over(events: number, bytes: number): boolean {
    return this.bufferedEvents + events > this.limits.maxBufferedEvents || this.bufferedBytes + bytes > this.limits.maxBufferedBytes;
  }

  private belowLowWater(): boolean {
    return this.bufferedEvents <= this.limits.maxBufferedEvents / 2 && this.bufferedBytes <= this.limits.maxBufferedBytes / 2;
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

export function watchCanceled(reason: string, endpoint: string): EtcdClientError {
  // A server's cancel is final for this watch (permission, a bad request): code FAILED_PRECONDITION (9).
  return new EtcdClientError('ETCD_WATCH_CANCELED', reason || 'watch canceled by the server', 9, false, endpoint);
}
