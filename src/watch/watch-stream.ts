// One client's Watch stream (etcd's serverWatchStream plus mvcc's watchStream): turns create, cancel and
// progress requests into watchers on the watchable store, and their output into wire-shaped responses in
// order, with prev_kv, fragments and periodic progress notifications. The gRPC Watch service wraps it 1:1;
// `send` returning false means "stop until resume()", as a Node stream's write() does.
import type { Logger } from 'pino';
import type { WatchableStore } from './watchable-store.js';
import type { WatcherHandle } from './watcher.js';
import type { KvEvent } from '../kv/types.js';
import type { EventBatch, WatchCreateRequest, WatchRequest, WatchResponse } from './types.js';
import { DEFAULT_MAX_RESPONSE_BYTES, eventSize, fragmentResponse } from './fragment.js';
import { ResponseQueue } from './response-queue.js';
import type { QueueOwner } from './response-queue.js';

export interface WatchStreamOptions {
  /** Progress notification interval for watchers with progress_notify (etcd default 10 min, plus up to 10% jitter). */
  readonly progressIntervalMs?: number;
  /** Responses above this are split when the watcher asked for fragments (etcd: MaxRequestBytes + 512 KiB). */
  readonly maxResponseBytes?: number;
  /** Responses one watcher may have queued before it becomes a victim (etcd's chanBufLen). */
  readonly bufferLen?: number;
  readonly logger?: Logger;
  readonly random?: () => number;
}

/**
 * Sends one response; `false` means "stop until resume()". `events`, when the transport has it, is a
 * shortcut for the most common response — one watcher's events of whole revisions with nothing else set —
 * that skips building the general response object.
 */
export type WatchResponseSender = ((resp: WatchResponse) => boolean | void) & {
  readonly events?: (watchId: number, revision: number, events: readonly KvEvent[]) => boolean | void;
};

export const DEFAULT_PROGRESS_INTERVAL_MS = 10 * 60 * 1000;

/** mvcc's errors for a create that fails; the client sees them as cancel_reason. */
export const ERR_DUPLICATE_WATCH_ID = 'mvcc: duplicate watch ID provided on the WatchStream';
export const ERR_EMPTY_WATCHER_RANGE = 'mvcc: watcher range is empty';

/** A watch as the stream tracks it. */
interface StreamWatch extends QueueOwner {
  readonly id: number;
  handle: WatcherHandle | undefined;
  /** No events went out since the last progress tick, so the next tick sends a notification (etcd). */
  progressDue: boolean;
}

/**
 * A watcher's queued response (its StreamWatch the owner in the queue): events, often in a batch the
 * store shares between watchers, or a WatcherResponse (a progress notification or a compaction notice).
 * Its watch id is always the owner's.
 */
type Owned = EventBatch & { readonly compactRevision?: number };

/** A queued control response (no owner in the queue) or a watcher's response. */
type Queued = WatchResponse | Owned;

/** A watcher response that merges made: its events are its own array, which later merges append to. */
interface MergedResponse extends EventBatch {
  readonly events: KvEvent[];
  /** The events' size. */
  readonly mergedBytes: number;
}

/**
 * While the client is behind (the transport said stop), a watcher's next events are folded into its
 * response still waiting in the queue, up to these bounds: one response then carries several whole
 * revisions, as etcd's catch-up responses for a slow watcher do, and the stream sends fewer, larger
 * messages until the client keeps up again. Revisions are never split and order is kept.
 */
const MERGE_MAX_EVENTS = 1000;
const MERGE_MAX_BYTES = 64 * 1024;

function eventsBytes(r: EventBatch): number {
  let n = 0;
  for (const ev of r.events) n += eventSize(ev);
  return n;
}

function response(fields: Partial<WatchResponse> & { header: { revision: number }; watchId: number }): WatchResponse {
  return { created: false, canceled: false, compactRevision: 0, cancelReason: '', fragment: false, events: [], ...fields };
}

export class WatchStream {
  private readonly watches = new Map<number, StreamWatch>();
  private readonly queue: ResponseQueue<StreamWatch, Queued>;
  private readonly maxResponseBytes: number;
  private readonly log: Logger | undefined;
  private readonly progressTimer: NodeJS.Timeout | undefined;
  /** Next id to try for a create without one (etcd's AutoWatchID = 0 starts the count). */
  private nextId = 0;
  /** The consumer said stop; resume() restarts the pump. */
  private paused = false;
  private pumpScheduled = false;
  /** A progress request waits until every watcher on the stream is synced. */
  private progressRequested = false;
  private closed = false;

  constructor(
    private readonly store: WatchableStore,
    private readonly send: WatchResponseSender,
    opts: WatchStreamOptions = {},
  ) {
    this.queue = new ResponseQueue(Math.max(1, opts.bufferLen ?? 128));
    this.maxResponseBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.log = opts.logger?.child({ component: 'watch-stream' });
    const interval = opts.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
    if (interval > 0) {
      // Jitter, as etcd adds, so streams opened together do not all notify together.
      const jitter = Math.floor((opts.random ?? Math.random)() * (interval / 10));
      this.progressTimer = setInterval(() => this.progressTick(), interval + jitter);
      this.progressTimer.unref();
    }
  }

  /** Handles one request from the client. */
  handle(req: WatchRequest): void {
    if ('createRequest' in req) this.create(req.createRequest);
    else if ('cancelRequest' in req) this.cancel(req.cancelRequest.watchId);
    else if ('progressRequest' in req) this.requestProgress();
  }

  create(req: WatchCreateRequest): void {
    if (this.closed) return;
    const rev = this.store.currentRev;
    // An empty key means the smallest key, "\0" (so key "" with range_end "\0" watches everything).
    const key = req.key && req.key.length > 0 ? req.key : Uint8Array.of(0);
    const rangeEnd = req.rangeEnd && req.rangeEnd.length > 0 ? req.rangeEnd : undefined;
    const fail = (reason: string): void =>
      this.control(response({ header: { revision: rev }, watchId: -1, created: true, canceled: true, cancelReason: reason }));
    const fromKey = rangeEnd !== undefined && rangeEnd.length === 1 && rangeEnd[0] === 0;
    if (rangeEnd !== undefined && !fromKey && Buffer.compare(key, rangeEnd) >= 0) return fail(ERR_EMPTY_WATCHER_RANGE);
    let id = req.watchId ?? 0;
    if (id === 0) {
      while (this.watches.has(this.nextId)) this.nextId++;
      id = this.nextId++;
    } else if (this.watches.has(id)) {
      return fail(ERR_DUPLICATE_WATCH_ID);
    }
    const sw: StreamWatch = { id, handle: undefined, progressDue: true, queued: 0, newest: -1 };
    this.watches.set(id, sw);
    // Created goes into the queue first, so it precedes anything the watcher sends.
    this.control(response({ header: { revision: rev }, watchId: id, created: true }));
    sw.handle = this.store.watch(
      {
        key,
        ...(rangeEnd ? { rangeEnd } : {}),
        startRevision: req.startRevision ?? 0,
        filters: req.filters ?? [],
        prevKv: req.prevKv ?? false,
        progressNotify: req.progressNotify ?? false,
        fragment: req.fragment ?? false,
        id,
      },
      {
        offer: (resp) => this.offer(sw, resp),
        offerBatch: (batch) => this.offer(sw, batch),
        synced: () => this.answerProgress(),
      },
    );
  }

  /** Cancels a watch of this stream; an unknown id gets no reply, as in etcd. */
  cancel(id: number): void {
    const sw = this.watches.get(id);
    if (this.closed || !sw) return;
    sw.handle?.cancel();
    this.watches.delete(id);
    this.control(response({ header: { revision: this.store.currentRev }, watchId: id, canceled: true }));
    this.answerProgress();
  }

  /**
   * A WatchProgressRequest: one response with watch_id -1 at the current revision, which clients treat as
   * being for all their watches. It is sent only once every watcher is synced (etcd 3.5's fix to 3.4,
   * which answered at once and could vouch for a revision whose events were still to come).
   */
  requestProgress(): void {
    if (this.closed) return;
    this.progressRequested = true;
    this.answerProgress();
  }

  /** The consumer has room again. */
  resume(): void {
    if (this.closed || !this.paused) return;
    this.paused = false;
    this.schedulePump();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.progressTimer) clearInterval(this.progressTimer);
    for (const sw of this.watches.values()) sw.handle?.cancel();
    this.watches.clear();
    this.queue.clear();
  }

  private answerProgress(): void {
    if (!this.progressRequested || this.closed) return;
    for (const sw of this.watches.values()) {
      const state = sw.handle?.state;
      if (state === 'unsynced' || state === 'victim') return;
    }
    this.progressRequested = false;
    this.control(response({ header: { revision: this.store.currentRev }, watchId: -1 }));
  }

  /** Periodic notification for watchers with progress_notify that had no events since the last tick. */
  private progressTick(): void {
    for (const sw of this.watches.values()) {
      if (!sw.handle?.progressNotify) continue;
      if (sw.progressDue) sw.handle.requestProgress();
      sw.progressDue = true;
    }
  }

  /** Folds a watcher's next events into its queued response (see MERGE_MAX_*), or undefined to keep them apart. */
  private readonly mergeEvents = (queued: Queued, next: Queued): Queued | undefined => {
    // Both are the same watcher's (merges are only tried between a watcher's own responses).
    const a = queued as Owned | MergedResponse;
    const b = next as Owned;
    if ((a as Owned).compactRevision || b.compactRevision || a.events.length === 0 || b.events.length === 0) return undefined;
    if (a.events.length + b.events.length > MERGE_MAX_EVENTS) return undefined;
    const merged = 'mergedBytes' in a ? a : undefined;
    // Sizes are counted only here, when the stream is behind: the usual push costs nothing extra.
    const bytes = (merged?.mergedBytes ?? eventsBytes(a)) + eventsBytes(b);
    if (bytes > MERGE_MAX_BYTES) return undefined;
    const events = merged?.events ?? [...a.events];
    for (const ev of b.events) events.push(ev);
    const m: MergedResponse = { revision: b.revision, events, mergedBytes: bytes };
    return m;
  };

  /** A watcher's response into the queue; false (the watcher becomes a victim) when it has too many waiting. */
  private offer(sw: StreamWatch, r: Owned): boolean {
    if (!this.queue.tryPush(sw, r, this.paused ? this.mergeEvents : undefined)) return false;
    this.schedulePump();
    return true;
  }

  private control(r: WatchResponse): void {
    this.queue.push(r);
    this.schedulePump();
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.paused || this.closed) return;
    this.pumpScheduled = true;
    // Never on the writer's stack: a commit only queues, the pump runs after it.
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    let freed = false;
    const queue = this.queue;
    while (!this.paused && !this.closed) {
      const value = queue.shift();
      if (value === undefined) break;
      if (queue.shiftedWasFull) freed = true;
      try {
        if (this.deliver(queue.shiftedOwner, value) === false) this.paused = true;
      } catch (e) {
        this.log?.error({ err: e }, 'watch response send failed; closing the stream');
        this.close();
        return;
      }
    }
    // A watcher whose queue was full may be a victim waiting for exactly this room.
    if (freed) this.store.kick();
    if (this.progressRequested) this.answerProgress();
  }

  /** Sends one queued item (several responses if it is fragmented); false if the consumer said stop. */
  private deliver(sw: StreamWatch | undefined, q: Queued): boolean {
    if (sw === undefined) return this.send(q as WatchResponse) !== false;
    const r = q as Owned;
    if (r.events.length > 0) sw.progressDue = false;
    const fast = this.send.events;
    if (fast && !r.compactRevision && !sw.handle?.fragment) return fast(sw.id, r.revision, r.events) !== false;
    let ok = true;
    for (const w of this.toWire(sw, r)) if (this.send(w) === false) ok = false;
    return ok;
  }

  private toWire(sw: StreamWatch, r: Owned): WatchResponse[] {
    const compactRevision = r.compactRevision ?? 0;
    const wire = response({
      header: { revision: r.revision },
      watchId: sw.id,
      canceled: compactRevision !== 0,
      compactRevision,
      events: r.events,
    });
    return sw.handle?.fragment ? fragmentResponse(wire, this.maxResponseBytes) : [wire];
  }
}
