// One watcher of the watch cache: the events of its key or prefix that its predicate lets through (an
// object entering the selection arrives as ADDED, one leaving it as DELETED of its last matching state),
// first a replay (the current objects, or the window's events after its resourceVersion), then live events
// through a bounded queue. A watcher whose queue is full is terminated, as Kubernetes' cacher does: its
// watch ends, and its client watches again from the last resourceVersion it saw — the cache never holds
// an unbounded backlog for a slow reader. Bookmarks are put in the queue only when asked for and never
// terminate anyone.
import type { Predicate, StoredObject, WatchEvent } from '../interface.js';
import type { CacheEvent } from './event-window.js';

export interface CacheWatcherOptions {
  readonly key: string;
  readonly predicate: Predicate | undefined;
  /** Events at or below this revision are not for this watcher (it starts after it). */
  readonly startRevision: number;
  readonly queueSize: number;
  readonly allowBookmarks: boolean;
  /** When the watch's timeout ends it (ms since the epoch), if it has one. */
  readonly deadline: number | undefined;
  readonly onEnd: (w: CacheWatcher) => void;
}

/** A shallow copy of a frozen object with another resourceVersion (its nested values stay shared). */
function atRevision(o: StoredObject, revision: number): StoredObject {
  return Object.freeze({ ...o, metadata: Object.freeze({ ...o.metadata, resourceVersion: String(revision) }) });
}

export class CacheWatcher {
  private replay: readonly WatchEvent[] = [];
  private replayAt = 0;
  private readonly queue: WatchEvent[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  /** Why it ended, when not by the consumer: 'terminated' (fell behind) or 'closed' (the cache relisted or stopped). */
  endReason: 'stopped' | 'terminated' | 'closed' | 'timeout' | undefined;
  nextBookmarkAt: number;
  private lastRevision: number;
  private readonly recursive: boolean;
  private readonly matches: (o: StoredObject) => boolean;

  constructor(
    private readonly opts: CacheWatcherOptions,
    now: number,
    bookmarkIntervalMs: number,
  ) {
    this.recursive = opts.key.endsWith('/');
    const p = opts.predicate;
    this.matches = !p || p.empty ? () => true : (o) => p.matches(o);
    this.lastRevision = opts.startRevision;
    this.nextBookmarkAt = this.bookmarkTime(now, bookmarkIntervalMs);
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get queued(): number {
    return this.queue.length + this.replay.length - this.replayAt;
  }

  wants(key: string): boolean {
    return this.recursive ? key.startsWith(this.opts.key) : key === this.opts.key;
  }

  /** The objects there now, as ADDED (for a watch without a resourceVersion). */
  replayObjects(objects: Iterable<StoredObject>): void {
    const out: WatchEvent[] = [];
    for (const o of objects) if (this.matches(o)) out.push({ type: 'ADDED', object: o });
    this.replay = out;
  }

  /** The window's events after the start revision. */
  replayEvents(events: readonly CacheEvent[]): void {
    const out: WatchEvent[] = [];
    for (const e of events) {
      if (!this.wants(e.key)) continue;
      const w = this.convert(e);
      if (w) out.push(w);
    }
    this.replay = out;
    const last = events.at(-1);
    if (last && last.revision > this.lastRevision) this.lastRevision = last.revision;
  }

  /** A live event from the cache. False when the watcher could not take it and was terminated. */
  add(e: CacheEvent): boolean {
    if (this.ended || e.revision <= this.opts.startRevision || !this.wants(e.key)) return true;
    this.lastRevision = e.revision;
    const w = this.convert(e);
    if (!w) return true;
    if (this.queue.length >= this.opts.queueSize) {
      this.end('terminated');
      return false;
    }
    this.queue.push(w);
    this.wakeUp();
    return true;
  }

  /** Sends a bookmark at `revision` if one is due; never one behind what the watcher was already sent. */
  bookmark(revision: number, now: number, intervalMs: number): void {
    if (this.ended || !this.opts.allowBookmarks || now < this.nextBookmarkAt) return;
    this.nextBookmarkAt = this.bookmarkTime(now, intervalMs);
    if (revision < this.lastRevision || this.queue.length >= this.opts.queueSize) return;
    this.lastRevision = revision;
    this.queue.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(revision) } } });
    this.wakeUp();
  }

  /** Roughly every interval, and two seconds before the watch's deadline (Kubernetes' nextBookmarkTime). */
  private bookmarkTime(now: number, intervalMs: number): number {
    const heartbeat = now + intervalMs;
    const d = this.opts.deadline;
    if (d === undefined) return heartbeat;
    const pretimeout = d - 2000;
    return pretimeout < heartbeat && pretimeout > now ? pretimeout : heartbeat;
  }

  end(reason: 'stopped' | 'terminated' | 'closed' | 'timeout'): void {
    if (this.ended) return;
    this.ended = true;
    this.endReason = reason;
    // Whatever was queued goes: the client resumes from the last resourceVersion it got.
    this.queue.length = 0;
    this.replay = [];
    this.opts.onEnd(this);
    this.wakeUp();
  }

  async next(): Promise<WatchEvent | undefined> {
    for (;;) {
      if (this.ended) return undefined;
      if (this.replayAt < this.replay.length) return this.replay[this.replayAt++];
      const e = this.queue.shift();
      if (e) return e;
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  private convert(e: CacheEvent): WatchEvent | undefined {
    const cur = e.type !== 'DELETED' && this.matches(e.object);
    const old = e.prevObject !== undefined && this.matches(e.prevObject);
    if (cur && old) return { type: 'MODIFIED', object: e.object };
    if (cur) return { type: 'ADDED', object: e.object };
    if (!old || !e.prevObject) return undefined;
    // Gone, or no longer selected: the last state it was selected in, at this event's revision.
    return { type: 'DELETED', object: e.type === 'DELETED' ? e.object : atRevision(e.prevObject, e.revision) };
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}
