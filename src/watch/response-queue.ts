// A watch stream's outgoing queue: one FIFO, so responses leave in the order they were made (a progress
// notification for the whole stream must follow every event it vouches for), with a bound per watcher
// (etcd's chanBufLen) so that one watcher's backlog makes that watcher, and only it, a victim. Control
// responses (created, canceled, progress) are few, driven by the client, and never refused.

interface Item<O, V> {
  readonly owner: O | undefined;
  readonly value: V;
}

export class ResponseQueue<O, V> {
  private items: (Item<O, V> | undefined)[] = [];
  private head = 0;
  private readonly counts = new Map<O, number>();

  constructor(readonly perOwner: number) {}

  get length(): number {
    return this.items.length - this.head;
  }

  /** Queues an owner's response unless the owner already has `perOwner` waiting. */
  tryPush(owner: O, value: V): boolean {
    const n = this.counts.get(owner) ?? 0;
    if (n >= this.perOwner) return false;
    this.counts.set(owner, n + 1);
    this.items.push({ owner, value });
    return true;
  }

  /** Queues a control response: never refused. */
  push(value: V): void {
    this.items.push({ owner: undefined, value });
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
      const n = this.counts.get(it.owner);
      if (n !== undefined) {
        wasFull = n >= this.perOwner;
        if (n <= 1) this.counts.delete(it.owner);
        else this.counts.set(it.owner, n - 1);
      }
    }
    return { value: it.value, owner: it.owner, wasFull };
  }

  clear(): void {
    this.items = [];
    this.head = 0;
    this.counts.clear();
  }
}
