// The watch cache's window of recent events, a ring as Kubernetes' watchCache keeps it: its capacity doubles
// (up to an upper bound) while even the oldest event is younger than the freshness duration (75 s), and
// halves when the newest quarter is older than that, so it holds about the last 75 s of changes — enough for
// a watcher that reconnects after a bookmark (one a minute) to resume without a relist — and no more.
import type { StoredObject } from '../interface.js';

export interface CacheEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly key: string;
  /** For DELETED: the object's last state with the deletion's resourceVersion. */
  readonly object: StoredObject;
  /** The object before this event, as the cache had it. */
  readonly prevObject: StoredObject | undefined;
  readonly revision: number;
  /** When the cache took the event in (ms). */
  readonly time: number;
}

export interface WindowOptions {
  readonly lowerBound?: number;
  readonly upperBound?: number;
  readonly freshMs?: number;
}

export class EventWindow {
  private buf: (CacheEvent | undefined)[];
  /** Events live in [start, end) (indices grow without bound; the slot is index % capacity). */
  private start = 0;
  private end = 0;
  private readonly lower: number;
  private readonly upper: number;
  private readonly freshMs: number;
  /** The revision of the list the window starts after, and whether an event was dropped since it. */
  private listRevision = 0;
  private droppedSinceList = false;

  constructor(opts: WindowOptions = {}) {
    this.lower = opts.lowerBound ?? 100;
    this.upper = Math.max(this.lower, opts.upperBound ?? 100 * 1024);
    this.freshMs = opts.freshMs ?? 75_000;
    this.buf = new Array<CacheEvent | undefined>(this.lower);
  }

  get capacity(): number {
    return this.buf.length;
  }

  get size(): number {
    return this.end - this.start;
  }

  /** Empties the window after a (re)list at `revision`: watches may resume from that revision on. */
  reset(revision: number): void {
    for (let i = this.start; i < this.end; i++) this.buf[i % this.buf.length] = undefined;
    this.start = this.end;
    this.listRevision = revision;
    this.droppedSinceList = false;
  }

  push(e: CacheEvent): void {
    this.resize(e.time);
    if (this.size === this.buf.length) {
      this.buf[this.start % this.buf.length] = undefined;
      this.start++;
      this.droppedSinceList = true;
    }
    this.buf[this.end % this.buf.length] = e;
    this.end++;
  }

  /**
   * The oldest revision a watch may start after: the list's while nothing was dropped since it, otherwise
   * the one just before the oldest event held. Undefined before the first list.
   */
  oldestResumable(): number | undefined {
    if (this.listRevision > 0 && !this.droppedSinceList) return this.listRevision;
    const first = this.at(this.start);
    return first ? first.revision - 1 : this.listRevision > 0 ? this.listRevision : undefined;
  }

  /** The events after `revision`, oldest first. */
  since(revision: number): CacheEvent[] {
    // Binary search for the first event newer than `revision`.
    let lo = this.start;
    let hi = this.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.at(mid)?.revision ?? 0) > revision) hi = mid;
      else lo = mid + 1;
    }
    const out: CacheEvent[] = [];
    for (let i = lo; i < this.end; i++) out.push(this.at(i) as CacheEvent);
    return out;
  }

  private at(i: number): CacheEvent | undefined {
    return i >= this.start && i < this.end ? this.buf[i % this.buf.length] : undefined;
  }

  private resize(now: number): void {
    const full = this.size === this.buf.length;
    if (!full) return;
    const oldest = this.at(this.start);
    if (oldest && now - oldest.time < this.freshMs && this.buf.length < this.upper) {
      this.reshape(Math.min(this.buf.length * 2, this.upper));
      return;
    }
    const quarter = this.at(this.end - Math.floor(this.buf.length / 4));
    if (quarter && now - quarter.time > this.freshMs && this.buf.length > this.lower) {
      this.reshape(Math.max(Math.floor(this.buf.length / 2), this.lower));
    }
  }

  private reshape(capacity: number): void {
    const next = new Array<CacheEvent | undefined>(capacity);
    // Shrinking keeps the newest events.
    if (capacity < this.size) {
      this.start = this.end - capacity;
      this.droppedSinceList = true;
    }
    for (let i = this.start; i < this.end; i++) next[i % capacity] = this.buf[i % this.buf.length];
    this.buf = next;
  }
}
