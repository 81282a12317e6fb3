// A watch stream's outgoing queue: one FIFO, so responses leave in the order they were made (a progress
// notification for the whole stream must follow every event it vouches for), with a bound per watcher
// (etcd's chanBufLen) so that one watcher's backlog makes that watcher, and only it, a victim. Control
// responses (created, canceled, progress) are few, driven by the client, and never refused.
//
// Each owner's count and newest item live on the owner itself, not in Maps keyed by owner: a watch stream
// queues and sends a response per watcher per revision, and Maps that grow and shrink that often
// reallocate their tables, in the old generation once the Map is old. Under 1000 watchers those tables
// were most of what survived V8's scavenges, and the scavenges that copied them held the event loop 10-25 ms.

/** What the queue keeps on each owner (initially 0 and -1). */
export interface QueueOwner {
  /** Pushes of this owner still queued (merged ones count one each). */
  queued: number;
  /** Position of the owner's newest item still queued, the only one a push may merge into (order is kept); -1 for none. */
  newest: number;
}

/** Folds `next` into `queued`, or says they must stay apart (undefined). */
export type Merge<V> = (queued: V, next: V) => V | undefined;

/**
 * Items live in a ring of three parallel arrays rather than an object each (a watch stream queues one per
 * watcher per revision), and the ring only grows: queueing allocates nothing once it is big enough. A
 * position counts items from when the queue was last empty; the item at position p is at p % capacity.
 */
export class ResponseQueue<O extends QueueOwner, V> {
  private owners: (O | undefined)[];
  private values: (V | undefined)[];
  /** Pushes each item holds (more than one once later ones were merged into it). */
  private weights: number[];
  /** Position of the next item to shift, and of the next one to push. */
  private head = 0;
  private tail = 0;
  /** Set by shift(): the owner of the value it returned (undefined for a control response)... */
  shiftedOwner: O | undefined;
  /** ...and whether that owner was at its bound (it may have a victim to retry). */
  shiftedWasFull = false;

  constructor(
    readonly perOwner: number,
    capacity = 16,
  ) {
    this.owners = new Array<O | undefined>(capacity).fill(undefined);
    this.values = new Array<V | undefined>(capacity).fill(undefined);
    this.weights = new Array<number>(capacity).fill(0);
  }

  get length(): number {
    return this.tail - this.head;
  }

  /**
   * Queues an owner's response unless the owner already has `perOwner` waiting (merged ones count
   * one each). With `merge`, a response may be folded into the owner's newest queued one instead of
   * queued behind it — only when nothing of the same owner would be overtaken.
   */
  tryPush(owner: O, value: V, merge?: Merge<V>): boolean {
    if (owner.queued >= this.perOwner) return false;
    owner.queued++;
    if (merge && owner.newest >= 0) {
      const i = owner.newest % this.values.length;
      const m = merge(this.values[i] as V, value);
      if (m !== undefined) {
        this.values[i] = m;
        this.weights[i] = (this.weights[i] as number) + 1;
        return true;
      }
    }
    owner.newest = this.tail;
    this.append(owner, value);
    return true;
  }

  /** Queues a control response: never refused, never merged. */
  push(value: V): void {
    this.append(undefined, value);
  }

  private append(owner: O | undefined, value: V): void {
    if (this.tail - this.head === this.values.length) this.grow();
    const i = this.tail++ % this.values.length;
    this.owners[i] = owner;
    this.values[i] = value;
    this.weights[i] = 1;
  }

  /** Doubles the ring, keeping every item at its position. */
  private grow(): void {
    const cap = this.values.length;
    const owners = new Array<O | undefined>(cap * 2).fill(undefined);
    const values = new Array<V | undefined>(cap * 2).fill(undefined);
    const weights = new Array<number>(cap * 2).fill(0);
    for (let p = this.head; p < this.tail; p++) {
      owners[p % (cap * 2)] = this.owners[p % cap];
      values[p % (cap * 2)] = this.values[p % cap];
      weights[p % (cap * 2)] = this.weights[p % cap] as number;
    }
    this.owners = owners;
    this.values = values;
    this.weights = weights;
  }

  /** The oldest response (its owner and whether it was full in shiftedOwner and shiftedWasFull), or undefined. */
  shift(): V | undefined {
    const p = this.head;
    if (p >= this.tail) return undefined;
    const i = p % this.values.length;
    const value = this.values[i] as V;
    const owner = this.owners[i];
    const weight = this.weights[i] as number;
    this.values[i] = undefined;
    this.owners[i] = undefined;
    this.head++;
    let wasFull = false;
    if (owner !== undefined) {
      if (owner.newest === p) owner.newest = -1;
      wasFull = owner.queued >= this.perOwner;
      owner.queued = Math.max(0, owner.queued - weight);
    }
    // Empty: no owner has an item left, so positions can start again from 0.
    if (this.head === this.tail) this.head = this.tail = 0;
    this.shiftedOwner = owner;
    this.shiftedWasFull = wasFull;
    return value;
  }

  clear(): void {
    for (let p = this.head; p < this.tail; p++) {
      const i = p % this.values.length;
      const owner = this.owners[i];
      if (owner) {
        owner.queued = 0;
        owner.newest = -1;
      }
      this.owners[i] = undefined;
      this.values[i] = undefined;
    }
    this.head = this.tail = 0;
    this.shiftedOwner = undefined;
  }
}
