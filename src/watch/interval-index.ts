// Which key ranges contain a key: the range-watcher half of a watcher group (etcd uses an interval tree).
// Watchers sharing one range share one entry, so a thousand watchers on one prefix cost one interval.
// Distinct intervals sit in a static tree over an array sorted by start, each node holding the largest end
// in its subtree, so a lookup costs O(log n + matches). Watchers move between groups often (synced,
// unsynced, victims), so the tree is rebuilt lazily: new intervals wait in a short list that lookups scan,
// emptied ones stay in the tree until they outnumber the live ones.

/** An interval [start, end); end null = no upper bound. */
interface Entry<T> {
  readonly start: string;
  readonly end: string | null;
  readonly items: Set<T>;
  inTree: boolean;
}

function entryKey(start: string, end: string | null): string {
  return `${start.length}:${start}${end === null ? '*' : `=${end}`}`;
}

/** Whether an end lies beyond `key` (null is +infinity). */
function endsAfter(end: string | null, key: string): boolean {
  return end === null || end > key;
}

function maxEnd(a: string | null, b: string | null): string | null {
  if (a === null || b === null) return null;
  return a > b ? a : b;
}

export class IntervalIndex<T> {
  private readonly entries = new Map<string, Entry<T>>();
  /** The tree: entries sorted by start; subtreeEnd[mid] covers the subtree whose root is mid. */
  private tree: Entry<T>[] = [];
  private subtreeEnd: (string | null)[] = [];
  /** Entries added since the last build. */
  private fresh: Entry<T>[] = [];
  /** Tree entries whose item set is empty. */
  private emptyInTree = 0;
  private items = 0;

  get size(): number {
    return this.items;
  }

  add(start: string, end: string | null, item: T): void {
    const k = entryKey(start, end);
    let e = this.entries.get(k);
    if (!e) {
      e = { start, end, items: new Set(), inTree: false };
      this.entries.set(k, e);
      this.fresh.push(e);
    }
    if (e.items.has(item)) return;
    if (e.items.size === 0 && e.inTree) this.emptyInTree--;
    e.items.add(item);
    this.items++;
    // Only once the item is in: a rebuild drops the entries it finds empty.
    if (this.fresh.length > 16 + (this.tree.length >> 2)) this.build();
  }

  delete(start: string, end: string | null, item: T): boolean {
    const k = entryKey(start, end);
    const e = this.entries.get(k);
    if (!e || !e.items.delete(item)) return false;
    this.items--;
    if (e.items.size > 0) return true;
    if (e.inTree) {
      this.emptyInTree++;
      if (this.emptyInTree > 16 + (this.tree.length >> 1)) this.build();
    } else {
      this.entries.delete(k);
      const i = this.fresh.indexOf(e);
      if (i >= 0) this.fresh.splice(i, 1);
    }
    return true;
  }

  /** Calls `f` with every item whose interval contains `key`. */
  forEach(key: string, f: (item: T) => void): void {
    if (this.tree.length > 0) this.visit(0, this.tree.length, key, f);
    for (const e of this.fresh) if (e.start <= key && endsAfter(e.end, key)) for (const it of e.items) f(it);
  }

  private visit(lo: number, hi: number, key: string, f: (item: T) => void): void {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (!endsAfter(this.subtreeEnd[mid] as string | null, key)) return;
      this.visit(lo, mid, key, f);
      const e = this.tree[mid] as Entry<T>;
      if (e.start > key) return; // everything to the right starts later still
      if (endsAfter(e.end, key)) for (const it of e.items) f(it);
      lo = mid + 1;
    }
  }

  /** Rebuilds the tree from the live entries. */
  private build(): void {
    const live: Entry<T>[] = [];
    for (const [k, e] of this.entries) {
      if (e.items.size === 0) {
        this.entries.delete(k);
        continue;
      }
      e.inTree = true;
      live.push(e);
    }
    live.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    this.tree = live;
    this.subtreeEnd = new Array<string | null>(live.length);
    this.fresh = [];
    this.emptyInTree = 0;
    if (live.length > 0) this.fill(0, live.length);
  }

  private fill(lo: number, hi: number): string | null {
    const mid = (lo + hi) >> 1;
    let end = (this.tree[mid] as Entry<T>).end;
    if (lo < mid) end = maxEnd(end, this.fill(lo, mid));
    if (mid + 1 < hi) end = maxEnd(end, this.fill(mid + 1, hi));
    this.subtreeEnd[mid] = end;
    return end;
  }
}
