// The tail of the log that the application has not yet persisted: entries (and possibly an incoming
// snapshot) handed out in Ready and made stable by advance().
import type { Entry, Snapshot } from './types.js';
import { invariant } from './errors.js';

export class Unstable {
  /** An incoming snapshot not yet persisted. */
  snapshot: Snapshot | undefined;
  entries: Entry[] = [];
  /** Index of entries[0]. Invariant: offset - 1 is the last stable index. */
  offset: number;
  /** Entries from here on have not been handed out in a Ready yet. offset <= offsetInProgress. */
  offsetInProgress: number;
  snapshotInProgress = false;

  constructor(offset: number) {
    this.offset = offset;
    this.offsetInProgress = offset;
  }

  maybeFirstIndex(): number | undefined {
    return this.snapshot ? this.snapshot.metadata.index + 1 : undefined;
  }

  maybeLastIndex(): number | undefined {
    if (this.entries.length > 0) return this.offset + this.entries.length - 1;
    return this.snapshot ? this.snapshot.metadata.index : undefined;
  }

  maybeTerm(i: number): number | undefined {
    if (i < this.offset) {
      if (this.snapshot && this.snapshot.metadata.index === i) return this.snapshot.metadata.term;
      return undefined;
    }
    const last = this.maybeLastIndex();
    if (last === undefined || i > last) return undefined;
    return (this.entries[i - this.offset] as Entry).term;
  }

  /** Entries not yet handed out. */
  nextEntries(): Entry[] {
    const inProgress = this.offsetInProgress - this.offset;
    return inProgress >= this.entries.length ? [] : this.entries.slice(inProgress);
  }

  nextSnapshot(): Snapshot | undefined {
    return this.snapshot && !this.snapshotInProgress ? this.snapshot : undefined;
  }

  /** Marks everything currently here as handed out to the application. */
  acceptInProgress(): void {
    if (this.entries.length > 0) this.offsetInProgress = this.offset + this.entries.length;
    if (this.snapshot) this.snapshotInProgress = true;
  }

  /** Entries up to (i, t) are persisted. Ignored if the entry at i was since replaced (term differs). */
  stableTo(i: number, t: number): void {
    const gt = this.maybeTerm(i);
    if (gt === undefined || i < this.offset) return;
    if (gt !== t) return;
    const num = i + 1 - this.offset;
    this.entries = this.entries.slice(num);
    this.offset = i + 1;
    this.offsetInProgress = Math.max(this.offsetInProgress, this.offset);
  }

  stableSnapTo(i: number): void {
    if (this.snapshot && this.snapshot.metadata.index === i) {
      this.snapshot = undefined;
      this.snapshotInProgress = false;
    }
  }

  restore(s: Snapshot): void {
    this.offset = s.metadata.index + 1;
    this.offsetInProgress = this.offset;
    this.entries = [];
    this.snapshot = s;
    this.snapshotInProgress = false;
  }

  truncateAndAppend(ents: readonly Entry[]): void {
    const first = ents[0];
    if (!first) return;
    const after = first.index;
    if (after === this.offset + this.entries.length) {
      for (const e of ents) this.entries.push(e);
    } else if (after <= this.offset) {
      // Replace everything unstable; the stable part beyond `after` is overridden by these entries.
      this.offset = after;
      this.entries = [...ents];
    } else {
      // Keep [offset, after), then append.
      this.entries = this.slice(this.offset, after).concat(ents);
    }
    this.offsetInProgress = Math.min(this.offsetInProgress, after);
  }

  slice(lo: number, hi: number): Entry[] {
    invariant(lo <= hi && lo >= this.offset && hi <= this.offset + this.entries.length, `unstable.slice[${lo},${hi}) out of bound [${this.offset},${this.offset + this.entries.length}]`);
    return this.entries.slice(lo - this.offset, hi - this.offset);
  }
}
