// Watch fan-out over the MVCC store (etcd's watchableStore). Watchers live in one of three places:
// `synced` (caught up: each commit is handed to them as it happens), `unsynced` (behind: a background loop
// catches them up from the store's history in batches of whole revisions) and `victims` (their sink was
// full: they keep the batch they could not send and are retried). The commit path never awaits: a watcher
// that cannot take a response is set aside, so a slow consumer never slows the writer.
import type { Logger } from 'pino';
import type { KvStore } from '../kv/kv-store.js';
import type { KvEvent } from '../kv/types.js';
import type { EventBatch, WatchOptions, WatchSink } from './types.js';
import type { WatcherHandle } from './watcher.js';
import { keyRange, toKey } from '../kv/key-range.js';
import { SLICE_ITEMS, runNow } from '../kv/sliced.js';
import type { Sliced } from '../kv/sliced.js';
import { Watcher } from './watcher.js';
import { WatcherGroup } from './watcher-group.js';

export interface WatchableStoreOptions {
  readonly logger?: Logger;
  /** How long the sync loop waits when a round made no progress (etcd: 100 ms). */
  readonly syncIntervalMs?: number;
  /** How often victims are retried (etcd: 10 ms). */
  readonly victimRetryMs?: number;
  /** Most revisions one catch-up response covers (etcd's watchBatchMaxRevs). */
  readonly batchMaxRevs?: number;
  /** Most unsynced watchers served by one sync round (etcd's maxWatchersPerSync). */
  readonly maxWatchersPerSync?: number;
}

export interface WatchableStoreStats {
  readonly synced: number;
  readonly unsynced: number;
  readonly victims: number;
}

export const DEFAULT_BATCH_MAX_REVS = 1000;

export class WatchableStore {
  private readonly synced = new WatcherGroup();
  private readonly unsynced = new WatcherGroup();
  private readonly victims = new Set<Watcher>();
  /** Live watchers that asked for prev_kv: while there are none, commits skip materializing previous values. */
  private readonly prevKvWatchers = new Set<Watcher>();
  private readonly log: Logger | undefined;
  private readonly syncIntervalMs: number;
  private readonly victimRetryMs: number;
  private readonly batchMaxRevs: number;
  private readonly maxWatchersPerSync: number;
  private readonly unsubscribe: () => void;
  /** Ids for watchers created without one. */
  private nextId = 0;
  /** A sync round is running (at most one at a time: rounds read history asynchronously). */
  private syncing = false;
  /** Something changed while a round ran: run another straight after it. */
  private syncAgain = false;
  private syncTimer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  private victimTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** notifyOne's list of the watchers a revision goes to, kept between revisions. */
  private targets: Watcher[] | undefined = [];
  /** The last revision handed to the synced group: every synced watcher has been sent all up to it. */
  private seenHead: number;

  constructor(
    readonly kv: KvStore,
    opts: WatchableStoreOptions = {},
  ) {
    this.log = opts.logger?.child({ component: 'watch' });
    this.syncIntervalMs = opts.syncIntervalMs ?? 100;
    this.victimRetryMs = opts.victimRetryMs ?? 10;
    this.batchMaxRevs = Math.max(1, opts.batchMaxRevs ?? DEFAULT_BATCH_MAX_REVS);
    this.maxWatchersPerSync = Math.max(1, opts.maxWatchersPerSync ?? 512);
    this.seenHead = kv.currentRev;
    const offCommit = kv.onCommit(
      (rev, events) => this.notify(rev, events),
      () => this.prevKvWatchers.size > 0,
      (rev, events) => this.notifySliced(rev, events),
    );
    const offRestore = kv.onRestore(() => this.restored());
    this.unsubscribe = () => {
      offCommit();
      offRestore();
    };
  }

  get currentRev(): number {
    return this.kv.currentRev;
  }

  get compactRev(): number {
    return this.kv.compactRev;
  }

  stats(): WatchableStoreStats {
    return { synced: this.synced.size, unsynced: this.unsynced.size, victims: this.victims.size };
  }

  /**
   * Starts a watcher. A start revision of 0, or one past the head, makes it synced at once; any other is
   * caught up from history (and canceled with a compaction notice if it lies below the compacted revision).
   */
  watch(opts: WatchOptions, sink: WatchSink): WatcherHandle {
    if (this.closed) throw new Error('watchable store is closed');
    const head = this.kv.currentRev;
    let start = opts.startRevision;
    // etcd reads a negative start as a revision below everything: compacted if anything was, else "now".
    if (start < 0 && this.kv.compactRev === 0) start = 0;
    const isSynced = start === 0 || start > head;
    const minRev = isSynced ? Math.max(head + 1, start) : start;
    const w = new Watcher(
      opts.id ?? this.nextId++,
      keyRange(opts.key, opts.rangeEnd),
      minRev,
      opts.filters ?? [],
      opts.prevKv ?? false,
      opts.progressNotify ?? false,
      opts.fragment ?? false,
      sink,
      this,
    );
    if (w.prevKv) this.prevKvWatchers.add(w);
    if (isSynced) {
      w.state = 'synced';
      this.synced.add(w);
    } else {
      this.unsynced.add(w);
      this.wakeSync();
    }
    return w;
  }

  /** @internal Called through WatcherHandle.cancel. */
  cancel(w: Watcher): void {
    this.prevKvWatchers.delete(w);
    this.synced.delete(w);
    this.unsynced.delete(w);
    this.victims.delete(w);
    w.pending = undefined;
    if (w.state !== 'compacted') w.state = 'canceled';
  }

  /** @internal Called through WatcherHandle.requestProgress: only a synced watcher can vouch for the head. */
  progress(w: Watcher): boolean {
    if (w.state !== 'synced') return false;
    return w.sendProgress(this.kv.currentRev);
  }

  /** Retries victims now and runs a sync round soon: a consumer calls this when it has room again. */
  kick(): void {
    if (this.closed) return;
    if (this.victims.size > 0) this.moveVictims();
    if (this.unsynced.size > 0) this.wakeSync();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    if (this.syncTimer) clearTimer(this.syncTimer);
    if (this.victimTimer) clearTimeout(this.victimTimer);
    for (const g of [this.synced, this.unsynced]) for (const w of [...g]) this.cancel(w);
    for (const w of [...this.victims]) this.cancel(w);
  }

  // ---- the commit path: synchronous, never waits on a consumer ----

  /**
   * One revision's events to every synced watcher of their keys. No Map per revision, and for the common
   * revision of one event no array per watcher either: every watcher gets one of two shared arrays (with or
   * without prevKv). Under 1000 watchers on one prefix, the per-revision Map and arrays were, with the
   * response queue's Maps, most of what survived V8's scavenges (see response-queue.ts).
   */
  private notify(rev: number, events: readonly KvEvent[]): void {
    this.seenHead = rev;
    if (this.synced.size === 0) return;
    try {
      if (events.length === 1) this.notifyOne(rev, events[0] as KvEvent);
      else this.notifyMany(rev, events);
    } catch (e) {
      // The writer must never see a watch failure.
      this.log?.error({ err: e, rev }, 'watch notify failed');
    }
  }

  private notifyOne(rev: number, ev: KvEvent): void {
    // Two batches shared by every watcher: with prev_kv and without.
    const full: EventBatch = { events: [ev], revision: rev };
    const bare: EventBatch = ev.prevKv ? { events: [{ type: ev.type, kv: ev.kv }], revision: rev } : full;
    // Gathered first, offered after the walk: a sink may change the group (cancel its watcher). The array
    // is kept for the next revision (taken while in use, in case a sink's offer ever leads back here).
    const targets = this.targets ?? [];
    this.targets = undefined;
    this.synced.forKey(toKey(ev.kv.key), (w) => {
      if (rev >= w.minRev) targets.push(w); // else a watcher that asked to start in the future
    });
    try {
      for (const w of targets) {
        const b = w.prevKv ? full : bare;
        if (!this.offerBatch(w, b)) this.refuse(w, b);
      }
    } finally {
      targets.length = 0;
      this.targets = targets;
    }
  }

  /**
   * notify() for a revision applied in slices (a delete of half a million keys): the events are matched to
   * watchers a slice at a time. That is safe while the loop serves others in between: the revision is the
   * head already, so a watcher created or placed meanwhile has minRev above it and is passed over (one
   * that wanted it got it from history), and no later revision is applied until this one is told.
   */
  private *notifySliced(rev: number, events: readonly KvEvent[]): Sliced<void> {
    this.seenHead = rev;
    if (this.synced.size === 0) return;
    try {
      if (events.length === 1) this.notifyOne(rev, events[0] as KvEvent);
      else yield* this.notifyManySliced(rev, events);
    } catch (e) {
      this.log?.error({ err: e, rev }, 'watch notify failed');
    }
  }

  private notifyMany(rev: number, events: readonly KvEvent[]): void {
    runNow(this.notifyManySliced(rev, events));
  }

  private *notifyManySliced(rev: number, events: readonly KvEvent[]): Sliced<void> {
    const touched: Watcher[] = [];
    const batches: KvEvent[][] = [];
    try {
      for (let i = 0; i < events.length; i++) {
        const ev = events[i] as KvEvent;
        if (i % SLICE_ITEMS === SLICE_ITEMS - 1) yield;
        let bare: KvEvent | undefined;
        this.synced.forKey(toKey(ev.kv.key), (w) => {
          if (rev < w.minRev) return;
          let b = w.gathering;
          if (!b) {
            b = w.gathering = [];
            touched.push(w);
            batches.push(b);
          }
          if (w.prevKv || !ev.prevKv) b.push(ev);
          else b.push((bare ??= { type: ev.type, kv: ev.kv }));
        });
      }
    } finally {
      for (const w of touched) w.gathering = undefined;
    }
    for (let i = 0; i < touched.length; i++) {
      const w = touched[i] as Watcher;
      // Canceled or set aside while the events were matched (in slices).
      if (w.state !== 'synced') continue;
      const b: EventBatch = { events: batches[i] as KvEvent[], revision: rev };
      if (!this.offerBatch(w, b)) this.refuse(w, b);
    }
  }

  /** Offers a watcher its events; false when its sink is full. */
  private offerBatch(w: Watcher, b: EventBatch): boolean {
    try {
      return w.sendBatch(b);
    } catch (e) {
      // A sink that throws is treated as full: it must not cost the other watchers their events.
      this.log?.error({ err: e, watchId: w.id, rev: b.revision }, 'watch sink failed');
      return false;
    }
  }

  /** A synced watcher whose sink refused a revision becomes a victim holding it. */
  private refuse(w: Watcher, b: EventBatch): void {
    this.synced.delete(w);
    w.minRev = b.revision + 1;
    this.makeVictim(w, b);
  }

  /**
   * The store's contents were replaced by a snapshot (a follower that fell behind): the synced watchers
   * have seen everything up to the old head, and now catch up from the new history (or learn it was
   * compacted). Unsynced watchers and victims already know where they stand.
   */
  private restored(): void {
    if (this.closed) return;
    for (const w of [...this.synced]) {
      this.synced.delete(w);
      w.minRev = Math.max(w.minRev, this.seenHead + 1);
      w.state = 'unsynced';
      this.unsynced.add(w);
    }
    this.seenHead = this.kv.currentRev;
    if (this.unsynced.size > 0) this.wakeSync();
  }

  // ---- victims ----

  private makeVictim(w: Watcher, batch: EventBatch): void {
    w.state = 'victim';
    w.pending = batch;
    this.victims.add(w);
    this.log?.debug({ watchId: w.id, rev: batch.revision }, 'slow watcher set aside');
    this.scheduleVictims();
  }

  private scheduleVictims(): void {
    if (this.victimTimer || this.closed) return;
    this.victimTimer = setTimeout(() => {
      this.victimTimer = undefined;
      this.moveVictims();
    }, this.victimRetryMs);
    this.victimTimer.unref();
  }

  /** Retries each victim's pending batch; the ones that get through rejoin synced or unsynced. */
  private moveVictims(): void {
    for (const w of [...this.victims]) {
      const b = w.pending;
      if (b && !w.sendEvents(b.events, b.revision)) continue;
      this.victims.delete(w);
      w.pending = undefined;
      this.place(w);
    }
    if (this.victims.size > 0) this.scheduleVictims();
  }

  /** Puts a watcher that has been sent everything below minRev where it belongs. */
  private place(w: Watcher): void {
    if (w.minRev > this.kv.currentRev) {
      w.state = 'synced';
      this.synced.add(w);
      w.notifySynced();
    } else {
      w.state = 'unsynced';
      this.unsynced.add(w);
      this.wakeSync();
    }
  }

  // ---- catching up from history ----

  private wakeSync(delayMs = 0): void {
    if (this.closed) return;
    if (this.syncing) {
      if (delayMs === 0) this.syncAgain = true;
      return;
    }
    if (this.syncTimer) {
      if (delayMs > 0) return;
      clearTimer(this.syncTimer);
    }
    const run = (): void => {
      this.syncTimer = undefined;
      void this.runSync();
    };
    if (delayMs === 0) {
      this.syncTimer = setImmediate(run);
    } else {
      const t = setTimeout(run, delayMs);
      t.unref();
      this.syncTimer = t;
    }
  }

  private async runSync(): Promise<void> {
    this.syncing = true;
    this.syncAgain = false;
    let progressed = false;
    try {
      progressed = await this.syncRound();
    } catch (e) {
      this.log?.error({ err: e }, 'watch sync round failed');
    } finally {
      this.syncing = false;
    }
    if (this.closed || this.unsynced.size === 0) return;
    // Keep going while rounds move watchers forward; back off when stuck (their sinks are full).
    this.wakeSync(progressed || this.syncAgain ? 0 : this.syncIntervalMs);
  }

  /**
   * One round: cancels unsynced watchers below the compacted revision, then reads one batch of at most
   * batchMaxRevs revisions from the first watcher's minRev and hands it to every unsynced watcher whose
   * minRev falls inside it. Served watchers that are still behind go to the back, so all take turns.
   * Returns whether any watcher moved forward.
   */
  private async syncRound(): Promise<boolean> {
    let progressed = false;
    const compactRev = this.kv.compactRev;
    let first: Watcher | undefined;
    for (const w of [...this.unsynced]) {
      if (w.minRev < compactRev) {
        // etcd: the notice may not fit either; then it is retried next round.
        if (w.sendCompacted(compactRev)) {
          this.unsynced.delete(w);
          w.state = 'compacted';
          progressed = true;
          this.log?.debug({ watchId: w.id, minRev: w.minRev, compactRev }, 'watcher compacted');
        }
        continue;
      }
      first ??= w;
    }
    if (!first) return progressed;
    const head = this.kv.currentRev;
    const from = first.minRev;
    if (from > head) {
      // Nothing to read (only reachable if the head moved back, which it does not); just place it.
      this.unsynced.delete(first);
      this.place(first);
      return true;
    }
    const to = Math.min(head, from + this.batchMaxRevs - 1);
    const chosen = new WatcherGroup();
    for (const w of this.unsynced) {
      if (w.minRev >= from && w.minRev <= to && w.minRev >= compactRev) chosen.add(w);
      if (chosen.size >= this.maxWatchersPerSync) break;
    }
    const batches = await this.readBatch(chosen, from, to);
    const compactNow = this.kv.compactRev;
    for (const w of chosen) {
      if (w.state !== 'unsynced') continue;
      // The backend reads from a snapshot taken as the read starts, so a compaction meanwhile should not
      // have cost us records; but a watcher now below the compacted revision is canceled as etcd would,
      // rather than trusting that.
      if (w.minRev < compactNow) {
        this.syncAgain = true;
        continue;
      }
      progressed = true;
      this.unsynced.delete(w);
      w.minRev = to + 1;
      const evs = batches.get(w);
      // The header says `to`, the revision the watcher is now complete up to. etcd sends the head there,
      // which overstates an intermediate batch to a client that resumes from header.revision + 1.
      if (evs && !w.sendEvents(evs, to)) {
        this.makeVictim(w, { events: evs, revision: to });
        continue;
      }
      // Commits made while we read are not in this batch; the watcher stays behind until it has them.
      this.place(w);
    }
    return progressed;
  }

  /** Reads revisions [from, to] and splits them into each chosen watcher's events (with prev_kv if asked). */
  private async readBatch(chosen: WatcherGroup, from: number, to: number): Promise<Map<Watcher, KvEvent[]>> {
    const batches = new Map<Watcher, KvEvent[]>();
    for await (const { rev, event } of this.kv.history(from, to)) {
      chosen.forKey(toKey(event.kv.key), (w) => {
        if (rev < w.minRev || !w.accepts(event)) return;
        let b = batches.get(w);
        if (!b) {
          b = [];
          batches.set(w, b);
        }
        b.push(event);
      });
    }
    // prev_kv of a history event is the key at the revision before it (etcd reads mod_revision - 1).
    const withPrev = new Map<KvEvent, KvEvent>();
    for (const [w, evs] of batches) {
      if (!w.prevKv) continue;
      for (let i = 0; i < evs.length; i++) {
        const ev = evs[i] as KvEvent;
        let full = withPrev.get(ev);
        if (!full) {
          const prevKv = await this.kv.kvAt(ev.kv.key, ev.kv.modRevision - 1);
          full = prevKv ? { ...ev, prevKv } : ev;
          withPrev.set(ev, full);
        }
        evs[i] = full;
      }
    }
    return batches;
  }
}

function clearTimer(t: NodeJS.Timeout | NodeJS.Immediate): void {
  if ('refresh' in t) clearTimeout(t);
  else clearImmediate(t);
}
