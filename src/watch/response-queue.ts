// A watch stream's outgoing queue: one FIFO, so responses leave in the order they were made (a progress
// notification for the whole stream must follow every event it vouches for), with a bound per watcher
// (etcd's chanBufLen) so that one watcher's backlog makes that watcher, and only it, a victim. Control
// responses (created, canceled, progress) are few, driven by the client, and never refused.
//
// Each owner's count and newest item live on the owner itself, not in Maps keyed by owner: a watch stream
// queues and sends a response per watcher per revision, and Maps that grow and shrink that often
// reallocate their tables, in the old generation once the Map is old. Under 1000 watchers those tables
// were most of what survived V8's scavenges, and the scavenges that copied them held the event loop 10-25 ms.

/** What the queue keeps on each owner (initially 0 and undefined). */
export interface QueueOwner {
  /** Pushes of this owner still queued (merged ones count one each). */
  queued: number;
  /** The owner's newest item still queued, the only one a push may merge into (order is kept). */
  newest: object | undefined;
}

interface Item<O, V> {
  readonly owner: O | undefined;
  value: V;
  /** Pushes this item holds (more than one once later ones were merged into it). */
  weight: number;
}

/** Folds `next` into `queued`, or says they must stay apart (undefined). */
export type Merge<V> = (queued: V, next: V) => V | undefined;

export class ResponseQueue<O extends QueueOwner, V> {
  private items: (Item<O, V> | undefined)[] = [];
  private head = 0;

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
    if (owner.queued >= this.perOwner) return false;
    owner.queued++;
    const last = owner.newest as Item<O, V> | undefined;
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
    owner.newest = it;
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
    const owner = it.owner;
    if (owner !== undefined) {
      if (owner.newest === it) owner.newest = undefined;
      wasFull = owner.queued >= this.perOwner;
      owner.queued = Math.max(0, owner.queued - it.weight);
    }
    return { value: it.value, owner: it.owner, wasFull };
  }

  clear(): void {
    for (let i = this.head; i < this.items.length; i++) {
      const owner = this.items[i]?.owner;
      if (owner) {
        owner.queued = 0;
        owner.newest = undefined;
      }
    }
    this.items = [];
    this.head = 0;
  }
}
