// The discrete event queue: items ordered by simulated time, ties broken by insertion order so that a
// run is a pure function of its seed.

interface Slot<T> {
  readonly at: number;
  readonly seq: number;
  readonly item: T;
}

/** A binary min-heap on (at, seq). */
export class EventQueue<T> {
  private readonly heap: Slot<T>[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, item: T): void {
    const heap = this.heap;
    heap.push({ at, seq: this.seq++, item });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i] as Slot<T>, heap[parent] as Slot<T>)) break;
      swap(heap, i, parent);
      i = parent;
    }
  }

  /** The time of the earliest item, or Infinity when empty. */
  nextAt(): number {
    return this.heap[0]?.at ?? Infinity;
  }

  pop(): T | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined) return undefined;
    const last = heap.pop() as Slot<T>;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l] as Slot<T>, heap[m] as Slot<T>)) m = l;
        if (r < heap.length && before(heap[r] as Slot<T>, heap[m] as Slot<T>)) m = r;
        if (m === i) break;
        swap(heap, i, m);
        i = m;
      }
    }
    return top.item;
  }
}

function before<T>(a: Slot<T>, b: Slot<T>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

function swap<T>(a: T[], i: number, j: number): void {
  const t = a[i] as T;
  a[i] = a[j] as T;
  a[j] = t;
}
