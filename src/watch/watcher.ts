// One watcher: a key range, the next revision it needs (minRev), its filters and where it sends. Which group
// holds it (synced, unsynced, victims) is the watchable store's business; the watcher only knows its state.
import type { KvEvent } from '../kv/types.js';
import type { KeyRange } from '../kv/key-range.js';
import type { EventBatch, WatchFilter, WatchSink, WatcherResponse } from './types.js';

/**
 * - synced: has been sent everything up to the store's head; gets each commit as it happens.
 * - unsynced: behind the head; caught up from history by the sync loop.
 * - victim: its sink was full; holds the batch it could not send, retried by the victim loop.
 * - compacted: fell below the compacted revision and was told so; receives nothing more.
 * - canceled: gone.
 */
export type WatcherState = 'synced' | 'unsynced' | 'victim' | 'compacted' | 'canceled';

export interface WatcherHandle {
  readonly id: number;
  readonly state: WatcherState;
  /** The next revision this watcher has not been sent yet (meaningful while not synced). */
  readonly minRev: number;
  readonly prevKv: boolean;
  readonly progressNotify: boolean;
  readonly fragment: boolean;
  /** Sends an event-less response at the current revision if the watcher is synced; false if not sent. */
  requestProgress(): boolean;
  cancel(): void;
}

export class Watcher implements WatcherHandle {
  state: WatcherState = 'unsynced';
  /** Set while a victim: what must be sent before the watcher can move on. */
  pending: EventBatch | undefined;
  /** The watchable store's scratch while it gathers one revision's events for this watcher. */
  gathering: KvEvent[] | undefined;
  private readonly noPut: boolean;
  private readonly noDelete: boolean;

  constructor(
    readonly id: number,
    readonly range: KeyRange,
    public minRev: number,
    filters: readonly WatchFilter[],
    readonly prevKv: boolean,
    readonly progressNotify: boolean,
    readonly fragment: boolean,
    private readonly sink: WatchSink,
    private readonly owner: { cancel(w: Watcher): void; progress(w: Watcher): boolean },
  ) {
    this.noPut = filters.includes('NOPUT');
    this.noDelete = filters.includes('NODELETE');
  }

  /** Whether the filters let this event through. */
  accepts(ev: KvEvent): boolean {
    return ev.type === 'PUT' ? !this.noPut : !this.noDelete;
  }

  /**
   * Offers the events of whole revisions. Filtered-out events are dropped first; if none are left the
   * response is not sent at all and counts as delivered (etcd's watcher.send).
   */
  sendEvents(events: readonly KvEvent[], revision: number): boolean {
    return this.sendBatch({ events, revision });
  }

  /** sendEvents() of a batch the store may be handing to many watchers: passed on as it is when nothing is filtered out. */
  sendBatch(b: EventBatch): boolean {
    const kept = this.noPut || this.noDelete ? b.events.filter((e) => this.accepts(e)) : b.events;
    if (kept.length === 0) return true;
    const sink = this.sink;
    if (sink.offerBatch) return sink.offerBatch(kept === b.events ? b : { events: kept, revision: b.revision });
    return sink.offer({ watchId: this.id, revision: b.revision, events: kept, compactRevision: 0 });
  }

  sendProgress(revision: number): boolean {
    return this.sink.offer({ watchId: this.id, revision, events: [], compactRevision: 0 });
  }

  sendCompacted(compactRevision: number): boolean {
    const r: WatcherResponse = { watchId: this.id, revision: 0, events: [], compactRevision };
    return this.sink.offer(r);
  }

  notifySynced(): void {
    this.sink.synced?.();
  }

  requestProgress(): boolean {
    return this.owner.progress(this);
  }

  cancel(): void {
    this.owner.cancel(this);
  }
}
