// The bytes of records that later writes superseded, by the main revision that superseded them. A record
// dies at the revision of the next change to its key (a tombstone at its own): compaction at `rev` removes
// exactly the records that died at or below `rev`, so it knows the bytes it frees without reading the
// records back from the backend (two million of them, a native buffer each, were most of its cost).
export class SupersededBytes {
  // Revisions ascending (writes and start-up's scan both go in revision order), bytes beside them; entries
  // before `head` are taken.
  private revs: number[] = [];
  private bytes: number[] = [];
  private head = 0;

  add(rev: number, n: number): void {
    const last = this.revs.length - 1;
    if (last >= this.head && this.revs[last] === rev) this.bytes[last] = (this.bytes[last] as number) + n;
    else {
      this.revs.push(rev);
      this.bytes.push(n);
    }
  }

  /** Takes (and forgets) the bytes of every record that died at or below `rev`. */
  takeUpTo(rev: number): number {
    let sum = 0;
    while (this.head < this.revs.length && (this.revs[this.head] as number) <= rev) sum += this.bytes[this.head++] as number;
    if (this.head === this.revs.length) {
      this.revs = [];
      this.bytes = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.revs.length) {
      this.revs = this.revs.slice(this.head);
      this.bytes = this.bytes.slice(this.head);
      this.head = 0;
    }
    return sum;
  }
}
