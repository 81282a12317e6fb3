// Flow control for one follower: the append messages sent but not yet acknowledged, as a bounded window.

export class Inflights {
  // Last index carried by each in-flight message, in send order. Acks free a prefix.
  private readonly buf: number[] = [];
  private bytesInflight = 0;
  private readonly sizes: number[] = [];

  constructor(
    readonly size: number,
    readonly maxBytes = 0, // 0 = no byte limit
  ) {}

  /** Records a message whose last entry has index `index` and whose entries weigh `bytes`. */
  add(index: number, bytes = 0): void {
    this.buf.push(index);
    this.sizes.push(bytes);
    this.bytesInflight += bytes;
  }

  /** Frees every in-flight message whose last index is <= to. */
  freeLE(to: number): void {
    let n = 0;
    while (n < this.buf.length && (this.buf[n] as number) <= to) {
      this.bytesInflight -= this.sizes[n] as number;
      n++;
    }
    if (n > 0) {
      this.buf.splice(0, n);
      this.sizes.splice(0, n);
    }
  }

  full(): boolean {
    return this.buf.length >= this.size || (this.maxBytes > 0 && this.bytesInflight >= this.maxBytes);
  }

  count(): number {
    return this.buf.length;
  }

  reset(): void {
    this.buf.length = 0;
    this.sizes.length = 0;
    this.bytesInflight = 0;
  }
}
