// A watch stream's outgoing queue: one FIFO, so responses leave in the order they were made (a progress
// notification for the whole stream must follow every event it vouches for), with a bound per watcher
// (etcd's chanBufLen) so that one watcher's backlog makes that watcher, and only it, a victim. Control
// responses (created, canceled, progress) are few, driven by the client, and never refused.

interface Item<O, V> {
  readonly owner: O | undefined;
  value: V;
  /** Pushes this item holds (more than one once later ones were merged into it). */
  weight: number;
}

/** Folds `next` into `queued`, or says they must stay apart (undefined). */
export type Merge<V> = (queued: V, next: V) => V | undefined;

export class ResponseQueue<O, V> {
  private items: (Item<O, V> | undefined)[] = [];
  private head = 0;
  private readonly counts = new Map<O, number>();
  /** Each owner's newest item still queued, the only one a push may merge into (order is kept). */
  private readonly newest = new Map<O, Item<O, V>>();

  constructor(readonly perOwner: number) {}

  get length(): number {
    return this.items.length - this.head;
  }

  /**
   * Queues an owner's response unless the owner already has `perOwner` waiting (merged ones count
   * one each). With `merge`, a response may be folded into the owner's newest queued one instead of
   * queued behind it — only when nothing of the same owner would be overtaken.
   */
  tryPush(owner: O, value: V, merge?: Merge<V>): boolean {
    const n = this.counts.get(owner) ?? 0;
    if (n >= this.perOwner) return false;
    this.counts.set(owner, n + 1);
    const last = this.newest.get(owner);
    if (merge && last) {
      const m = merge(last.value, value);
      if (m !== undefined) {
        last.value = m;
        last.weight++;
        return true;
      }
    }
    const it: Item<O, V> = { owner, value, weight: 1 };
    this.items.push(it);
    this.newest.set(owner, it);
    return true;
  }

  /** Queues a control response: never refused, never merged. */
  push(value: V): void {
    this.items.push({ owner: undefined, value, weight: 1 });
  }

  /** The oldest response, and whether its owner was at its bound (it may have a victim to retry). */
  shift(): { value: V; owner: O | undefined; wasFull: boolean } | undefined {
    if (this.head >= this.items.length) return undefined;
    const it = this.items[this.head] as Item<O, V>;
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    let wasFull = false;
    if (it.owner !== undefined) {
      if (this.newest.get(it.owner) === it) this.newest.delete(it.owner);
      const n = this.counts.get(it.owner);
      if (n !== undefined) {
        wasFull = n >= this.perOwner;
        if (n <= it.weight) this.counts.delete(it.owner);
        else this.counts.set(it.owner, n - it.weight);
      }
    }
    return { value: it.value, owner: it.owner, wasFull };
  }

  clear(): void {
    this.items = [];
    this.head = 0;
    this.counts.clear();
    this.newest.clear();
  }
}
