// The history of one key as generations: a generation runs from a create to a delete (tombstone). The
// index answers "which revision of this key is visible at revision R" without touching the backend, and
// holds the current value so reads at the head never need the disk.
//
// Example (key "foo"): put@2, put@4, delete@6, put@8 gives generations
//   {created 2, ver 3, revs [2, 4, 6(tombstone)]}, {created 8, ver 1, revs [8]}
// compact(5) keeps rev 4 (the latest <= 5) and drops rev 2; compact(7) drops the whole first
// generation, since the key was deleted at or before 7.
import type { Revision } from './revision.js';

export class Generation {
  /** Number of puts in this generation (the tombstone is not one). */
  ver = 0;
  /** Main revision of the put that created the generation. */
  created = 0;
  // Parallel arrays of revisions in this generation (main, sub), oldest first: one packed array per
  // field instead of one object per revision keeps a million keys small. `subs` stays undefined while
  // every sub is 0 (the common case: one change per transaction).
  mains: number[] = EMPTY_REVS;
  subs: number[] | undefined;

  isEmpty(): boolean {
    return this.mains.length === 0;
  }

  sub(i: number): number {
    return this.subs ? (this.subs[i] as number) : 0;
  }

  append(main: number, sub: number): void {
    if (this.mains.length === 0) {
      // Exact-size arrays: growing an empty array by push reserves room for 17 elements.
      this.mains = [main];
      this.subs = sub === 0 ? undefined : [sub];
      return;
    }
    if (this.mains.length < EXACT_UP_TO) {
      // A short history grows by exact-size copies: push on a 1-element array reserves room for 19, and
      // most keys stay short (a put and a delete: the 500,000 tombstones of one big delete).
      this.mains = grown(this.mains, main);
      if (this.subs) this.subs = grown(this.subs, sub);
    } else {
      this.mains.push(main);
      if (this.subs) this.subs.push(sub);
    }
    if (!this.subs && sub !== 0) {
      this.subs = this.mains.map(() => 0);
      this.subs[this.subs.length - 1] = sub;
    }
  }

  /** Calls f with each of the first n revisions. */
  forFirst(n: number, f: (main: number, sub: number) => void): void {
    for (let i = 0; i < n; i++) f(this.mains[i] as number, this.sub(i));
  }

  /** Drops the first n revisions. */
  dropFirst(n: number): void {
    this.mains = this.mains.slice(n);
    if (this.subs) this.subs = this.subs.slice(n);
  }
}

/** Shared by every empty generation; never mutated (append replaces it). */
const EMPTY_REVS: number[] = [];

/** Histories shorter than this grow by exact-size copies (amortized growth above). */
const EXACT_UP_TO = 8;

/** A copy of `a` with `x` appended, exactly as long as it needs to be. */
function grown(a: readonly number[], x: number): number[] {
  const n = a.length;
  const b = new Array<number>(n + 1);
  for (let i = 0; i < n; i++) b[i] = a[i] as number;
  b[n] = x;
  return b;
}

export interface VisibleRevision {
  readonly main: number;
  readonly sub: number;
  readonly created: number;
  readonly version: number;
}

const NO_LEASE = '0';

/**
 * A key's index entry. The current generation lives inline (the class extends Generation), so the
 * common key — one generation, a few revisions — is one object plus its arrays; closed (tombstoned)
 * generations, rarer, go in `closed`.
 */
export class KeyIndex extends Generation {
  readonly key: string;
  /** The current value (latin1) and lease while the key is live; undefined once deleted. */
  value: string | undefined;
  lease = NO_LEASE;
  /** Generations ended by a delete, oldest first; undefined while there are none. */
  closed: Generation[] | undefined;

  constructor(key: string) {
    super();
    this.key = key;
  }

  /** Number of generations, the current one included. */
  private genCount(): number {
    return (this.closed?.length ?? 0) + 1;
  }

  /** Generation i (0 = oldest); the last is the current one, this object itself. */
  private genAt(i: number): Generation {
    const c = this.closed;
    return c && i < c.length ? (c[i] as Generation) : this;
  }

  /** Records a put at (main, sub). `created`/`version` restore a generation whose start was compacted. */
  put(main: number, sub: number, restore?: { created: number; version: number }): void {
    if (this.isEmpty()) {
      this.created = restore ? restore.created : main;
      this.ver = restore ? restore.version - 1 : 0;
    }
    this.append(main, sub);
    this.ver++;
  }

  /** Records a delete at (main, sub): the current generation closes and an empty one begins. */
  tombstone(main: number, sub: number): void {
    this.append(main, sub);
    const g = new Generation();
    g.ver = this.ver;
    g.created = this.created;
    g.mains = this.mains;
    g.subs = this.subs;
    // An exact one-element array for the first closed generation ([] and push would reserve 17 slots).
    if (this.closed) this.closed.push(g);
    else this.closed = [g];
    this.ver = 0;
    this.created = 0;
    this.mains = EMPTY_REVS;
    this.subs = undefined;
    this.value = undefined;
    this.lease = NO_LEASE;
  }

  isLive(): boolean {
    return !this.isEmpty();
  }

  /** Whether the key has no history at all (every generation compacted away). */
  hasNoHistory(): boolean {
    return (this.closed === undefined || this.closed.length === 0) && this.isEmpty();
  }

  /** The last modification (put or delete). */
  modified(): Revision | undefined {
    for (let i = this.genCount() - 1; i >= 0; i--) {
      const g = this.genAt(i);
      const n = g.mains.length;
      if (n > 0) return { main: g.mains[n - 1] as number, sub: g.sub(n - 1) };
    }
    return undefined;
  }

  /** The revision of this key visible at `atRev`, or undefined if the key did not exist then. */
  get(atRev: number): VisibleRevision | undefined {
    const last = this.genCount() - 1;
    for (let i = last; i >= 0; i--) {
      const g = this.genAt(i);
      if (g.isEmpty()) continue;
      const n = g.mains.length;
      if (i !== last && (g.mains[n - 1] as number) <= atRev) return undefined; // deleted at or before atRev
      if ((g.mains[0] as number) > atRev) continue; // the generation started later
      // The latest revision <= atRev within the generation.
      for (let j = n - 1; j >= 0; j--) {
        const m = g.mains[j] as number;
        if (m <= atRev) return { main: m, sub: g.sub(j), created: g.created, version: g.ver - (n - 1 - j) + (i !== last ? 1 : 0) };
      }
    }
    return undefined;
  }

  /**
   * Forgets history superseded at `atRev`, calling `dropped` with each revision forgotten (its record can
   * go from the backend). Returns the revision that must stay in the backend (the value visible at atRev),
   * if any. After this, hasNoHistory() tells whether the key can be dropped.
   */
  compact(atRev: number, dropped: (main: number, sub: number) => void = () => undefined): Revision | undefined {
    // Drop closed generations whose tombstone is at or before atRev.
    const c = this.closed;
    if (c) {
      let gi = 0;
      while (gi < c.length && ((c[gi] as Generation).mains[(c[gi] as Generation).mains.length - 1] as number) <= atRev) {
        const g = c[gi] as Generation;
        g.forFirst(g.mains.length, dropped);
        gi++;
      }
      if (gi > 0) this.closed = gi === c.length ? undefined : c.slice(gi);
    }
    const g = this.genAt(0);
    if (g.isEmpty()) return undefined;
    let j = -1;
    for (let k = g.mains.length - 1; k >= 0; k--) {
      if ((g.mains[k] as number) <= atRev) {
        j = k;
        break;
      }
    }
    if (j < 0) return undefined;
    if (j > 0) {
      g.forFirst(j, dropped);
      g.dropFirst(j);
    }
    return { main: g.mains[0] as number, sub: g.sub(0) };
  }
}
