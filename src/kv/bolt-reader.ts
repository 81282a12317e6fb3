// A bbolt database file read without bbolt: the other half of bolt-writer.ts, for bringing an etcd
// cluster's data into Setpoint (`etcdctl snapshot save` gives a bbolt file of etcd's backend). The layout
// is bbolt's as bolt-writer.ts describes it, plus what bbolt itself writes and the writer does not: buckets
// small enough to live inline in their parent's leaf (bucket header root 0, then a page image), branch
// pages over branch pages, page sizes other than 4096, and two meta pages of which the valid one with the
// higher txid is current. Pages are read one at a time from the file, so a large database is never held
// in memory; a damaged file is a BoltError naming what is wrong, never a crash or a wrong answer.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { fnv1a64 } from './bolt-writer.js';

const PAGE_HEADER = 16;
const ELEMENT = 16;
const BRANCH_FLAG = 0x01;
const LEAF_FLAG = 0x02;
const META_FLAG = 0x04;
const BUCKET_LEAF_FLAG = 0x01;
const MAGIC = 0xed0cdaed;
const VERSION = 2;
/** Deeper than any real tree (a tree of 4 KiB pages holds more than 10^20 keys at depth 16). */
const MAX_DEPTH = 64;

export class BoltError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: not a readable bbolt database: ${message}`);
    this.name = 'BoltError';
  }
}

interface Meta {
  readonly pageSize: number;
  readonly root: bigint;
  readonly highWater: bigint;
  readonly txid: bigint;
}

/** A page image: its header fields and its bytes (the page and its overflow pages). */
interface Page {
  readonly flags: number;
  readonly count: number;
  readonly bytes: Buffer;
}

export type BoltEntry = readonly [key: Buffer, value: Buffer];

export class BoltReader {
  private readonly meta: Meta;

  private constructor(
    private readonly path: string,
    private readonly fd: number,
    /** Bytes of the file that belong to the database (a trailing hash, if any, excluded). */
    private readonly size: number,
  ) {
    this.meta = this.readMeta();
  }

  /** Opens `path`; `size` limits reading to its first bytes (etcd snapshots end with a sha256 after the database). */
  static open(path: string, size?: number): BoltReader {
    const fd = openSync(path, 'r');
    try {
      return new BoltReader(path, fd, size ?? fstatSync(fd).size);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  close(): void {
    closeSync(this.fd);
  }

  /** The names of the top-level buckets. */
  bucketNames(): string[] {
    const names: string[] = [];
    for (const [k, , flags] of this.walk(this.pageAt(this.meta.root), 0)) if ((flags & BUCKET_LEAF_FLAG) !== 0) names.push(k.toString('latin1'));
    return names;
  }

  /** The entries of top-level bucket `name` in key order; none when there is no such bucket. */
  *bucket(name: string): Generator<BoltEntry> {
    const want = Buffer.from(name, 'latin1');
    for (const [k, v, flags] of this.walk(this.pageAt(this.meta.root), 0)) {
      if ((flags & BUCKET_LEAF_FLAG) === 0 || !k.equals(want)) continue;
      if (v.length < 16) throw this.fail(`bucket "${name}" has a ${v.length}-byte header`);
      const root = v.readBigUInt64LE(0);
      // An inline bucket: its leaf page image follows the header in the parent's value.
      const page = root === 0n ? this.inlinePage(v.subarray(16), name) : this.pageAt(root);
      for (const [ek, ev, ef] of this.walk(page, 0)) if ((ef & BUCKET_LEAF_FLAG) === 0) yield [ek, ev];
      return;
    }
  }

  private fail(message: string): BoltError {
    return new BoltError(this.path, message);
  }

  private readMeta(): Meta {
    const metas: Meta[] = [];
    // The meta pages are at 0 and 1, one page size apart; the size is in the meta itself.
    const first = this.read(0, Math.min(4096, this.size));
    let pageSize = 4096;
    if (first.length >= PAGE_HEADER + 12 && first.readUInt32LE(PAGE_HEADER) === MAGIC) pageSize = first.readUInt32LE(PAGE_HEADER + 8);
    if (pageSize < 512 || pageSize > 1 << 16 || (pageSize & (pageSize - 1)) !== 0) throw this.fail(`page size ${pageSize}`);
    for (const id of [0, 1]) {
      const p = this.read(id * pageSize, PAGE_HEADER + 64);
      if (p.length < PAGE_HEADER + 64) continue;
      const m = PAGE_HEADER;
      if ((p.readUInt16LE(8) & META_FLAG) === 0 || p.readUInt32LE(m) !== MAGIC || p.readUInt32LE(m + 4) !== VERSION) continue;
      if (fnv1a64(p.subarray(m, m + 56)) !== p.readBigUInt64LE(m + 56)) continue;
      metas.push({ pageSize: p.readUInt32LE(m + 8), root: p.readBigUInt64LE(m + 16), highWater: p.readBigUInt64LE(m + 40), txid: p.readBigUInt64LE(m + 48) });
    }
    if (metas.length === 0) throw this.fail('no valid meta page (bad magic, version or checksum)');
    const meta = metas.reduce((a, b) => (b.txid > a.txid ? b : a));
    if (meta.pageSize !== pageSize) throw this.fail(`meta pages disagree on the page size (${pageSize}, ${meta.pageSize})`);
    return meta;
  }

  private read(pos: number, len: number): Buffer {
    const b = Buffer.alloc(Math.max(0, Math.min(len, this.size - pos)));
    let got = 0;
    while (got < b.length) {
      const n = readSync(this.fd, b, got, b.length - got, pos + got);
      if (n === 0) break;
      got += n;
    }
    return b.subarray(0, got);
  }

  private pageAt(pgid: bigint): Page {
    if (pgid < 2n || pgid >= this.meta.highWater) throw this.fail(`page ${pgid} is outside the database (high water ${this.meta.highWater})`);
    const ps = this.meta.pageSize;
    const pos = Number(pgid) * ps;
    const head = this.read(pos, PAGE_HEADER);
    if (head.length < PAGE_HEADER) throw this.fail(`page ${pgid} is past the end of the file`);
    if (head.readBigUInt64LE(0) !== pgid) throw this.fail(`page ${pgid} says it is page ${head.readBigUInt64LE(0)}`);
    const overflow = head.readUInt32LE(12);
    if (BigInt(overflow) + pgid >= this.meta.highWater) throw this.fail(`page ${pgid} overflows past the high water mark`);
    const bytes = this.read(pos, (overflow + 1) * ps);
    if (bytes.length < (overflow + 1) * ps) throw this.fail(`page ${pgid} is cut short by the end of the file`);
    return { flags: head.readUInt16LE(8), count: head.readUInt16LE(10), bytes };
  }

  private inlinePage(bytes: Buffer, bucket: string): Page {
    if (bytes.length < PAGE_HEADER) throw this.fail(`inline bucket "${bucket}" is cut short`);
    return { flags: bytes.readUInt16LE(8), count: bytes.readUInt16LE(10), bytes };
  }

  /** A page's leaf entries in key order (key, value, element flags), descending through branch pages. */
  private *walk(page: Page, depth: number): Generator<readonly [Buffer, Buffer, number]> {
    if (depth > MAX_DEPTH) throw this.fail('the tree is deeper than any real one (a cycle?)');
    const { bytes, count } = page;
    if (PAGE_HEADER + count * ELEMENT > bytes.length) throw this.fail(`a page of ${bytes.length} bytes claims ${count} elements`);
    if ((page.flags & LEAF_FLAG) !== 0) {
      for (let i = 0; i < count; i++) {
        const at = PAGE_HEADER + i * ELEMENT;
        const start = at + bytes.readUInt32LE(at + 4);
        const kEnd = start + bytes.readUInt32LE(at + 8);
        const vEnd = kEnd + bytes.readUInt32LE(at + 12);
        if (vEnd > bytes.length) throw this.fail('a leaf element points past its page');
        yield [bytes.subarray(start, kEnd), bytes.subarray(kEnd, vEnd), bytes.readUInt32LE(at)];
      }
      return;
    }
    if ((page.flags & BRANCH_FLAG) === 0) throw this.fail(`a bucket's tree holds a page with flags 0x${page.flags.toString(16)}`);
    for (let i = 0; i < count; i++) {
      const at = PAGE_HEADER + i * ELEMENT;
      yield* this.walk(this.pageAt(bytes.readBigUInt64LE(at + 8)), depth + 1);
    }
  }
}
