// A user's merged key permissions, as etcd's range_perm_cache.go keeps them: every READ / WRITE / READWRITE
// permission of every role the user holds, as half-open intervals of keys. A permission with no range_end is
// the one key; range_end "\0" means every key from `key` on. A request on one key needs an interval holding
// it; a request on a range needs the union of intervals to cover the whole range without a gap.

export type PermType = 'READ' | 'WRITE' | 'READWRITE';

export interface KeyPermission {
  readonly permType: PermType;
  readonly key: Uint8Array;
  /** Empty: the key alone; "\0": from the key on. */
  readonly rangeEnd: Uint8Array;
}

/** [begin, end): end null is past every key. */
interface Interval {
  readonly begin: Buffer;
  readonly end: Buffer | null;
}

/** Compares two interval ends, null being past every key. */
function cmpEnd(a: Buffer | null, b: Buffer | null): number {
  if (a === null) return b === null ? 0 : 1;
  if (b === null) return -1;
  return Buffer.compare(a, b);
}

function isFromKey(rangeEnd: Uint8Array): boolean {
  return rangeEnd.length === 1 && rangeEnd[0] === 0;
}

/** The interval a permission (or a request) names. */
function interval(key: Uint8Array, rangeEnd: Uint8Array): Interval {
  const begin = Buffer.from(key);
  if (rangeEnd.length === 0) return { begin, end: Buffer.concat([begin, Buffer.from([0])]) };
  return { begin, end: isFromKey(rangeEnd) ? null : Buffer.from(rangeEnd) };
}

class IntervalSet {
  private readonly ivs: Interval[] = [];
  private sorted = true;

  add(iv: Interval): void {
    this.ivs.push(iv);
    this.sorted = false;
  }

  /** Whether some interval holds the key. */
  holds(key: Buffer): boolean {
    return this.ivs.some((iv) => Buffer.compare(iv.begin, key) <= 0 && cmpEnd(key, iv.end) < 0);
  }

  /** Whether the intervals together cover [begin, end) with no gap. */
  covers(q: Interval): boolean {
    if (!this.sorted) {
      this.ivs.sort((a, b) => Buffer.compare(a.begin, b.begin));
      this.sorted = true;
    }
    let reached: Buffer | null = q.begin;
    for (const iv of this.ivs) {
      if (reached === null || cmpEnd(reached, q.end) >= 0) return true;
      if (Buffer.compare(iv.begin, reached) > 0) return false; // a gap before this interval
      if (cmpEnd(iv.end, reached) > 0) reached = iv.end;
    }
    return reached === null || cmpEnd(reached, q.end) >= 0;
  }
}

/** One user's read and write intervals, built once per auth change (etcd's unifiedRangePermissions). */
export class RangePerms {
  private readonly read = new IntervalSet();
  private readonly write = new IntervalSet();

  constructor(perms: Iterable<KeyPermission>) {
    for (const p of perms) {
      const iv = interval(p.key, p.rangeEnd);
      if (p.permType !== 'WRITE') this.read.add(iv);
      if (p.permType !== 'READ') this.write.add(iv);
    }
  }

  /** `rangeEnd` empty: the key alone; "\0": from the key on. */
  permits(kind: 'READ' | 'WRITE', key: Uint8Array, rangeEnd: Uint8Array): boolean {
    const set = kind === 'READ' ? this.read : this.write;
    if (rangeEnd.length === 0) return set.holds(Buffer.from(key));
    const q = interval(key, rangeEnd);
    return set.covers(q);
  }
}
