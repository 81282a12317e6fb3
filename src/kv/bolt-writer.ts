// A bbolt database file, written once, start to end. etcd's snapshots are bbolt files, and etcdctl
// (`snapshot status`, `snapshot restore`) and etcd itself open them with bbolt, so a Setpoint snapshot
// has to be one too. The layout is bbolt's (version 2, little-endian, as on amd64):
//
//   page header (16 bytes): id u64 | flags u16 | count u16 | overflow u32 (pages after this one)
//   page 0 and 1: meta — magic 0xED0CDAED | version 2 | page size | flags | root bucket {root pgid u64,
//                 sequence u64} | freelist pgid | high-water pgid | txid | checksum (FNV-1a 64 of the rest)
//   leaf page:    count elements {flags u32, pos u32, ksize u32, vsize u32}, pos counted from the
//                 element itself, then keys and values; flag 1 marks a sub-bucket whose value is a
//                 bucket header {root pgid u64, sequence u64}
//   branch page:  count elements {pos u32, ksize u32, pgid u64}, each child's first key
//   freelist:     count page ids (none here: nothing is ever freed in a file written once)
//
// Buckets are written one after another, leaves first (sorted entries packed into pages, an oversized
// entry taking several contiguous pages), then the branch levels above them; then the root bucket's leaf
// naming every bucket, the freelist, and last the two meta pages, which are the only writes that go back.
import type { FileHandle } from 'node:fs/promises';

export const BOLT_PAGE_SIZE = 4096;
const PAGE_HEADER = 16;
const ELEMENT = 16;
const BRANCH_FLAG = 0x01;
const LEAF_FLAG = 0x02;
const META_FLAG = 0x04;
const FREELIST_FLAG = 0x10;
const BUCKET_LEAF_FLAG = 0x01;
const MAGIC = 0xed0cdaed;
const VERSION = 2;
/** Sequential writes are gathered up to this size. */
const WRITE_BUFFER = 1 << 20;

/** FNV-1a, 64-bit, as bbolt checksums its meta pages. */
export function fnv1a64(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = BigInt.asUintN(64, h * 0x100000001b3n);
  }
  return h;
}

interface Child {
  readonly firstKey: Buffer;
  readonly pgid: number;
}

/** Writes pages in page-id order from page 2 on; the meta pages come last (finish). */
export class BoltWriter {
  private nextPgid = 2;
  private chunks: Buffer[] = [];
  private chunkBytes = 0;
  /** Where the next gathered byte goes in the file. */
  private filePos = 2 * BOLT_PAGE_SIZE;
  private readonly buckets: { name: Buffer; root: number }[] = [];

  constructor(private readonly fh: FileHandle) {}

  /** Writes a bucket from entries sorted by key (bytes), which may come from a stream. */
  async bucket(name: string, entries: AsyncIterable<readonly [Buffer, Buffer]> | Iterable<readonly [Buffer, Buffer]>): Promise<void> {
    const leaves = await this.paged(entries, (e) => e[0].length + e[1].length, (page) => this.leafPage(page, 0));
    // An empty bucket still gets a root: an empty leaf page.
    if (leaves.length === 0) leaves.push(await this.leafPage([], 0));
    this.buckets.push({ name: Buffer.from(name), root: await this.branches(leaves) });
  }

  /** Writes the root bucket, the freelist and the meta pages; returns the file's size in bytes. */
  async finish(): Promise<number> {
    const named = [...this.buckets].sort((a, b) => Buffer.compare(a.name, b.name));
    const entries = named.map((b): readonly [Buffer, Buffer] => {
      const header = Buffer.alloc(16);
      header.writeBigUInt64LE(BigInt(b.root), 0);
      return [b.name, header];
    });
    // A handful of buckets: the root bucket is one leaf page.
    const root = (await this.leafPage(entries, BUCKET_LEAF_FLAG)).pgid;
    const freelist = this.nextPgid;
    const fl = this.newPage(1, FREELIST_FLAG, 0);
    await this.push(fl);
    await this.flush();
    const highWater = this.nextPgid;
    for (const id of [0, 1]) {
      const p = this.newPage(1, META_FLAG, 0, id);
      const m = PAGE_HEADER;
      p.writeUInt32LE(MAGIC, m);
      p.writeUInt32LE(VERSION, m + 4);
      p.writeUInt32LE(BOLT_PAGE_SIZE, m + 8);
      p.writeUInt32LE(0, m + 12);
      p.writeBigUInt64LE(BigInt(root), m + 16);
      p.writeBigUInt64LE(0n, m + 24);
      p.writeBigUInt64LE(BigInt(freelist), m + 32);
      p.writeBigUInt64LE(BigInt(highWater), m + 40);
      // bbolt keeps meta txid % 2 on page txid % 2 and opens the valid meta with the higher txid.
      p.writeBigUInt64LE(id === 0 ? 2n : 1n, m + 48);
      p.writeBigUInt64LE(fnv1a64(p.subarray(m, m + 56)), m + 56);
      await this.fh.write(p, 0, p.length, id * BOLT_PAGE_SIZE);
    }
    return highWater * BOLT_PAGE_SIZE;
  }

  /** Builds the branch levels over a bucket's pages; returns its root page. */
  private async branches(children: Child[]): Promise<number> {
    let level = children;
    while (level.length > 1) level = await this.paged(level, (c) => c.firstKey.length, (page) => this.branchPage(page));
    return (level[0] as Child).pgid;
  }

  /**
   * Packs items, in order, into pages: each takes an element header and `dataBytes`, and a page is
   * written once the next item would overflow it (an item too big for any page gets a run of pages).
   */
  private async paged<T>(items: AsyncIterable<T> | Iterable<T>, dataBytes: (item: T) => number, write: (page: T[]) => Promise<Child>): Promise<Child[]> {
    const pages: Child[] = [];
    let page: T[] = [];
    let size = PAGE_HEADER;
    for await (const item of items) {
      const need = ELEMENT + dataBytes(item);
      if (page.length > 0 && size + need > BOLT_PAGE_SIZE) {
        pages.push(await write(page));
        page = [];
        size = PAGE_HEADER;
      }
      page.push(item);
      size += need;
    }
    if (page.length > 0) pages.push(await write(page));
    return pages;
  }

  private async leafPage(entries: readonly (readonly [Buffer, Buffer])[], flags: number): Promise<Child> {
    let size = PAGE_HEADER + entries.length * ELEMENT;
    for (const [k, v] of entries) size += k.length + v.length;
    const pages = Math.ceil(size / BOLT_PAGE_SIZE);
    const pgid = this.nextPgid;
    const p = this.newPage(pages, LEAF_FLAG, entries.length);
    let data = PAGE_HEADER + entries.length * ELEMENT;
    entries.forEach(([k, v], i) => {
      const at = PAGE_HEADER + i * ELEMENT;
      p.writeUInt32LE(flags, at);
      p.writeUInt32LE(data - at, at + 4);
      p.writeUInt32LE(k.length, at + 8);
      p.writeUInt32LE(v.length, at + 12);
      k.copy(p, data);
      v.copy(p, data + k.length);
      data += k.length + v.length;
    });
    await this.push(p);
    return { firstKey: entries[0]?.[0] ?? Buffer.alloc(0), pgid };
  }

  private async branchPage(children: readonly Child[]): Promise<Child> {
    let size = PAGE_HEADER + children.length * ELEMENT;
    for (const c of children) size += c.firstKey.length;
    const pages = Math.ceil(size / BOLT_PAGE_SIZE);
    const pgid = this.nextPgid;
    const p = this.newPage(pages, BRANCH_FLAG, children.length);
    let data = PAGE_HEADER + children.length * ELEMENT;
    children.forEach((c, i) => {
      const at = PAGE_HEADER + i * ELEMENT;
      p.writeUInt32LE(data - at, at);
      p.writeUInt32LE(c.firstKey.length, at + 4);
      p.writeBigUInt64LE(BigInt(c.pgid), at + 8);
      c.firstKey.copy(p, data);
      data += c.firstKey.length;
    });
    await this.push(p);
    return { firstKey: (children[0] as Child).firstKey, pgid };
  }

  /** A zeroed run of `pages` pages with its header; takes the next page ids unless `id` is given (metas). */
  private newPage(pages: number, flags: number, count: number, id?: number): Buffer {
    const p = Buffer.alloc(pages * BOLT_PAGE_SIZE);
    const pgid = id ?? this.nextPgid;
    if (id === undefined) this.nextPgid += pages;
    p.writeBigUInt64LE(BigInt(pgid), 0);
    p.writeUInt16LE(flags, 8);
    p.writeUInt16LE(count, 10);
    p.writeUInt32LE(pages - 1, 12);
    return p;
  }

  private async push(p: Buffer): Promise<void> {
    this.chunks.push(p);
    this.chunkBytes += p.length;
    if (this.chunkBytes >= WRITE_BUFFER) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.chunkBytes === 0) return;
    const buf = Buffer.concat(this.chunks, this.chunkBytes);
    this.chunks = [];
    this.chunkBytes = 0;
    await this.fh.write(buf, 0, buf.length, this.filePos);
    this.filePos += buf.length;
  }
}
