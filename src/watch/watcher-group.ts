// A set of watchers indexed by what they watch (etcd's watcherGroup): single-key watchers in a map keyed by
// the key, range watchers in an interval index, so finding the watchers of a changed key never scans them
// all. Iteration is in insertion order, which the sync loop uses to take turns fairly.
import type { Watcher } from './watcher.js';
import { IntervalIndex } from './interval-index.js';

export class WatcherGroup {
  private readonly all = new Set<Watcher>();
  private readonly byKey = new Map<string, Set<Watcher>>();
  private readonly ranges = new IntervalIndex<Watcher>();

  get size(): number {
    return this.all.size;
  }

  has(w: Watcher): boolean {
    return this.all.has(w);
  }

  add(w: Watcher): void {
    if (this.all.has(w)) return;
    this.all.add(w);
    const { start, end } = w.range;
    if (end === undefined) {
      let set = this.byKey.get(start);
      if (!set) {
        set = new Set();
        this.byKey.set(start, set);
      }
      set.add(w);
    } else {
      this.ranges.add(start, end === '' ? null : end, w);
    }
  }

  delete(w: Watcher): boolean {
    if (!this.all.delete(w)) return false;
    const { start, end } = w.range;
    if (end === undefined) {
      const set = this.byKey.get(start);
      set?.delete(w);
      if (set && set.size === 0) this.byKey.delete(start);
    } else {
      this.ranges.delete(start, end === '' ? null : end, w);
    }
    return true;
  }

  /** Calls `f` with every watcher whose range contains `key`. */
  forKey(key: string, f: (w: Watcher) => void): void {
    const set = this.byKey.get(key);
    if (set) for (const w of set) f(w);
    if (this.ranges.size > 0) this.ranges.forEach(key, f);
  }

  [Symbol.iterator](): IterableIterator<Watcher> {
    return this.all.values();
  }
}
