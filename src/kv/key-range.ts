// etcd's key-range conventions: [key, rangeEnd); an empty rangeEnd means the single key; rangeEnd "\0"
// means every key >= key. Keys are held as latin1 strings so JS string order is byte order.

export interface KeyRange {
  readonly start: string;
  /** Exclusive end; undefined = single key; '' = no upper bound. */
  readonly end: string | undefined;
}

export function toKey(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
}

export function fromKey(s: string): Buffer {
  return Buffer.from(s, 'latin1');
}

export function keyRange(key: Uint8Array, rangeEnd: Uint8Array | undefined): KeyRange {
  const start = toKey(key);
  if (!rangeEnd || rangeEnd.length === 0) return { start, end: undefined };
  if (rangeEnd.length === 1 && rangeEnd[0] === 0) return { start, end: '' };
  return { start, end: toKey(rangeEnd) };
}

export function inRange(r: KeyRange, k: string): boolean {
  if (r.end === undefined) return k === r.start;
  return k >= r.start && (r.end === '' || k < r.end);
}

/** The end of the prefix range for `prefix`: the prefix with its last byte +1, with carry. */
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  const end = Uint8Array.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if ((end[i] as number) < 0xff) {
      end[i] = (end[i] as number) + 1;
      return end.subarray(0, i + 1);
    }
  }
  // All 0xff: every key after the prefix.
  return new Uint8Array([0]);
}
