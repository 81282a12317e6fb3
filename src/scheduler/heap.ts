// A binary heap keyed by string, with removal and update by key: the scheduling queue's activeQ and
// backoffQ (Kubernetes' internal/heap).

export class KeyedHeap<T> {
  private readonly items: T[] = [];
  private readonly pos = new Map<string, number>();

  constructor(
    private readonly keyOf: (v: T) => string,
    /** True when a must come out before b. */
    private readonly less: (a: T, b: T) => boolean,
  ) {}

  get size(): number {
    return this.items.length;
  }

  has(key: string): boolean {
    return this.pos.has(key);
  }

  get(key: string): T | undefined {
    const i = this.pos.get(key);
    return i === undefined ? undefined : this.items[i];
  }

  peek(): T | undefined {
    return this.items[0];
  }

  /** Adds, or replaces the item with the same key and restores the order. */
  push(v: T): void {
    const k = this.keyOf(v);
    const i = this.pos.get(k);
    if (i !== undefined) {
      this.items[i] = v;
      this.fix(i);
      return;
    }
    this.items.push(v);
    this.pos.set(k, this.items.length - 1);
    this.up(this.items.length - 1);
  }

  pop(): T | undefined {
    if (this.items.length === 0) return undefined;
    const top = this.items[0] as T;
    this.removeAt(0);
    return top;
  }

  delete(key: string): T | undefined {
    const i = this.pos.get(key);
    if (i === undefined) return undefined;
    const v = this.items[i] as T;
    this.removeAt(i);
    return v;
  }

  values(): readonly T[] {
    return this.items;
  }

  private removeAt(i: number): void {
    const last = this.items.pop() as T;
    this.pos.delete(this.keyOf(i === this.items.length ? last : (this.items[i] as T)));
    if (i < this.items.length) {
      this.items[i] = last;
      this.pos.set(this.keyOf(last), i);
      this.fix(i);
    }
  }

  private fix(i: number): void {
    if (!this.up(i)) this.down(i);
  }

  private swap(i: number, j: number): void {
    const a = this.items[i] as T;
    const b = this.items[j] as T;
    this.items[i] = b;
    this.items[j] = a;
    this.pos.set(this.keyOf(b), i);
    this.pos.set(this.keyOf(a), j);
  }

  private up(i: number): boolean {
    const start = i;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(this.items[i] as T, this.items[p] as T)) break;
      this.swap(i, p);
      i = p;
    }
    return i !== start;
  }

  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const c = r < n && this.less(this.items[r] as T, this.items[l] as T) ? r : l;
      if (!this.less(this.items[c] as T, this.items[i] as T)) return;
      this.swap(i, c);
      i = c;
    }
  }
}
