// The store's disk: classic-level holding one record per revision (key 'r'+main+sub), leases ('l'+id)
// and metadata ('m'+name). Writes collect in a buffer that reads see at once and that is written as one
// atomic batch, together with the consistent index that describes it.
import { ClassicLevel } from 'classic-level';
import { pack, unpack } from 'msgpackr';
import { stat, readdir } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { KvStoreError } from './errors.js';
import { collectYoung } from './sliced.js';

type Db = ClassicLevel<Buffer, Buffer>;
type Entry = readonly [Buffer, Buffer | null];

/** Metadata keys are this prefix and a name. */
export const META_PREFIX = 'm:';
/** Lease keys are this byte and the lease id in decimal; the value holds the TTL. */
export const LEASE_PREFIX = 0x6c; // 'l'

const FORMAT_KEY = Buffer.from(`${META_PREFIX}format`);
const FORMAT = 'setpoint-kv/2';

/** The record naming the backend's format, which a full image of the backend (a snapshot) carries. */
export function formatRecord(): [Buffer, Buffer] {
  return [FORMAT_KEY, Buffer.from(FORMAT)];
}

export function metaKey(name: string): Buffer {
  return Buffer.from(`${META_PREFIX}${name}`);
}

export function leaseKey(id: string): Buffer {
  return Buffer.concat([Buffer.from([LEASE_PREFIX]), Buffer.from(id)]);
}

export function leaseValue(ttl: number): Buffer {
  return pack({ ttl });
}

/** A lease record back: its id (decimal) and TTL. */
export function decodeLease(k: Buffer, v: Buffer): { id: string; ttl: number } {
  return { id: k.subarray(1).toString(), ttl: (unpack(v) as { ttl: number }).ttl };
}

/**
 * Entries added to a LevelDB batch per turn of the event loop while it is built: each is a native call of
 * 1-5 us, and 5,000 of them (a compaction's deletes) held the loop 20 ms on a loaded machine.
 */
const BATCH_CHUNK = 1000;

/** Keys compare as binary strings; the buffer is keyed by latin1 so Map lookups are exact. */
function bkey(k: Buffer): string {
  return k.toString('latin1');
}

/**
 * Entries per chunk of Appended's arrays. One array of every record a 500,000-key delete writes grew in
 * steps of several MB, each a fresh allocation the kernel faults in page by page when V8 fills it: `perf
 * record` on a member found one such step (clear_page_erms in a push) holding the loop 40-50 ms, page
 * faults costing tens of microseconds each in this VM. Chunks of 4,096 (32 KiB) are born in the young
 * generation, whose pages are already mapped, and never copied.
 */
const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;

/**
 * Unflushed records appended in strictly increasing key order (each write's new revisions): kept in
 * chunked arrays, without the string key and Map entry the general buffer costs per write, and found by
 * binary search.
 */
class Appended {
  private readonly keyChunks: Buffer[][] = [];
  private readonly valueChunks: Buffer[][] = [];
  length = 0;

  /** False when `key` does not sort after the last key appended. */
  tryAppend(key: Buffer, value: Buffer): boolean {
    if (this.length > 0 && Buffer.compare(this.key(this.length - 1), key) >= 0) return false;
    if ((this.length & (CHUNK - 1)) === 0) {
      this.keyChunks.push([]);
      this.valueChunks.push([]);
    }
    (this.keyChunks[this.keyChunks.length - 1] as Buffer[]).push(key);
    (this.valueChunks[this.valueChunks.length - 1] as Buffer[]).push(value);
    this.length++;
    return true;
  }

  key(i: number): Buffer {
    return (this.keyChunks[i >>> CHUNK_BITS] as Buffer[])[i & (CHUNK - 1)] as Buffer;
  }

  value(i: number): Buffer {
    return (this.valueChunks[i >>> CHUNK_BITS] as Buffer[])[i & (CHUNK - 1)] as Buffer;
  }

  /** Index of the first key >= `key`. */
  private lowerBound(key: Buffer): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Buffer.compare(this.key(mid), key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  get(key: Buffer): Buffer | undefined {
    const i = this.lowerBound(key);
    return i < this.length && this.key(i).equals(key) ? this.value(i) : undefined;
  }

  /** Calls f for each record in [gte, lt), in key order. */
  forRange(gte: Buffer, lt: Buffer, f: (k: Buffer, v: Buffer) => void): void {
    for (let i = this.lowerBound(gte); i < this.length && Buffer.compare(this.key(i), lt) < 0; i++) f(this.key(i), this.value(i));
  }
}

/**
 * LevelDB's write buffer: about 32 MiB, drawn anew each time a store opens. Members apply the same writes,
 * so with one fixed size every member on a host wrote its level-0 table (and synced it) at the same
 * moment: three 33 MB tables at once held the disk for 100-150 ms, and every member's log write waited
 * behind them (check perf --load=m's slowest requests, 0.22 s). Sizes that differ put the flushes apart.
 */
function writeBufferBytes(): number {
  return Math.round((24 + Math.random() * 16) * 1024 * 1024);
}

export class Backend {
  /** Unflushed writes: [key, value], value null for a delete. Reads consult it before the database. */
  private pending = new Map<string, Entry>();
  /** Unflushed records written in key order (putRecord); `pending` overrides them (it is written after). */
  private appended = new Appended();
  private flushing: Promise<void> | undefined;
  /** Bytes of live data written minus bytes deleted: the store's size for quota purposes. */
  size = 0;

  private constructor(
    private readonly db: Db,
    readonly dir: string,
  ) {}

  static async open(dir: string): Promise<Backend> {
    let existing: string[] = [];
    try {
      const st = await stat(dir);
      if (!st.isDirectory()) throw new KvStoreError('KV_FOREIGN_DIR', `${dir} is not a directory`);
      existing = await readdir(dir);
    } catch (e) {
      if (e instanceof KvStoreError) throw e;
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const looksLikeLevel = existing.includes('CURRENT');
    if (existing.length > 0 && !looksLikeLevel) {
      throw new KvStoreError('KV_FOREIGN_DIR', `${dir} is not a Setpoint key-value data directory (it holds other files)`);
    }
    const db: Db = new ClassicLevel<Buffer, Buffer>(dir, {
      keyEncoding: 'buffer',
      valueEncoding: 'buffer',
      createIfMissing: true,
      // Like etcd's bbolt, values are stored as they are: snappy cost flush and compaction CPU on every write.
      compression: false,
      // LevelDB's defaults (4 KiB blocks, 4 MiB write buffer) cost a write system call per 4 KiB block and
      // a level-0 table every 4 MiB, and every table holds the meta keys written with each batch, so each
      // level-0 compaction merges them all again. Under `etcdctl check perf --load=l` the compaction thread
      // took 0.024-0.025 ms of CPU per write, 0.014-0.015 with these; reads of old revisions (one block per
      // point read) stay as fast (bench:kv).
      blockSize: 16 * 1024,
      writeBufferSize: writeBufferBytes(),
    });
    try {
      await db.open();
    } catch (e) {
      const cause = (e as { cause?: Error }).cause;
      throw new KvStoreError('KV_CORRUPT', `cannot open key-value data in ${dir}: ${cause?.message ?? (e as Error).message}`);
    }
    const fmt = await db.get(FORMAT_KEY);
    if (fmt === undefined) {
      if (looksLikeLevel) {
        // A LevelDB that is not ours (or one whose first write never completed but holds other keys).
        const it = db.keys({ limit: 1 });
        const any = await it.next();
        await it.close();
        if (any !== undefined) {
          await db.close();
          throw new KvStoreError('KV_FOREIGN_DIR', `${dir} holds a LevelDB database that is not a Setpoint key-value store`);
        }
      }
      await db.put(FORMAT_KEY, Buffer.from(FORMAT), { sync: true });
    } else if (fmt.toString() !== FORMAT) {
      await db.close();
      throw new KvStoreError('KV_VERSION', `${dir} holds key-value data in format ${fmt.toString()}, this build reads ${FORMAT}`);
    }
    return new Backend(db, dir);
  }

  put(key: Buffer, value: Buffer): void {
    this.toGeneral(key, value);
  }

  /**
   * put() for a key that sorts after every key written before it (a new revision's record). One that does
   * not, or that the general buffer may hold, goes to the general buffer, so the latest write always wins.
   */
  putRecord(key: Buffer, value: Buffer): void {
    if (this.pendingMax !== undefined && Buffer.compare(key, this.pendingMax) <= 0) return this.toGeneral(key, value);
    if (!this.appended.tryAppend(key, value)) this.toGeneral(key, value);
  }

  del(key: Buffer): void {
    this.toGeneral(key, null);
  }

  /** The largest key in `pending` (meta and lease keys sort below the records). */
  private pendingMax: Buffer | undefined;

  private toGeneral(key: Buffer, value: Buffer | null): void {
    this.pending.set(bkey(key), [key, value]);
    if (this.pendingMax === undefined || Buffer.compare(key, this.pendingMax) > 0) this.pendingMax = key;
  }

  putMeta(name: string, value: unknown): void {
    this.put(metaKey(name), pack(value));
  }

  async getMeta<T>(name: string): Promise<T | undefined> {
    const v = await this.read(metaKey(name));
    return v === undefined ? undefined : (unpack(v) as T);
  }

  pendingCount(): number {
    return this.pending.size + this.appended.length;
  }

  private held: Promise<void> | undefined;

  /**
   * Holds flushes until the returned release is called: a write transaction applied in slices over several
   * turns of the event loop buffers its records meanwhile, and a flush in between would put half of its
   * revision on disk beside the old consistent index, which a restart would read as applied. One hold at a
   * time (writes are serialized).
   */
  hold(): () => void {
    if (this.held) throw new KvStoreError('KV_INTERNAL', 'backend: a hold is already active');
    let release!: () => void;
    this.held = new Promise<void>((r) => {
      release = r;
    });
    return () => {
      this.held = undefined;
      release();
    };
  }

  /** Writes the buffered changes as one atomic batch. Concurrent callers share one write. */
  async flush(sync = false): Promise<void> {
    // A write applied over several turns (hold()) is written whole or not at all: never half of it.
    while (this.flushing || this.held) await (this.flushing ?? this.held);
    if (this.pending.size === 0 && this.appended.length === 0) return;
    const batch = this.pending;
    const appended = this.appended;
    this.pending = new Map();
    this.pendingMax = undefined;
    this.appended = new Appended();
    // While the batch is built and written its entries must stay visible to reads: keep them as a lower layer.
    this.inflight = batch;
    this.inflightAppended = appended;
    this.flushing = this.writeBatch(batch, appended, sync).finally(() => {
      this.flushing = undefined;
      this.inflight = undefined;
      this.inflightAppended = undefined;
    });
    await this.flushing;
  }

  /**
   * One atomic LevelDB batch. Building it costs about a microsecond an entry on the event loop, so the
   * batch of a large delete or compaction (150,000 records) is built over several turns, not in one.
   */
  private async writeBatch(batch: Map<string, Entry>, appended: Appended, sync: boolean): Promise<void> {
    const chained = this.db.batch();
    let n = 0;
    // The appended records first: a later entry of the batch for the same key must win.
    for (let i = 0; i < appended.length; i++) {
      chained.put(appended.key(i), appended.value(i));
      if (++n % BATCH_CHUNK === 0) await nextTurn();
    }
    for (const [key, value] of batch.values()) {
      if (value === null) chained.del(key);
      else chained.put(key, value);
      if (++n % BATCH_CHUNK === 0) await nextTurn();
    }
    await chained.write({ sync });
  }

  private inflight: Map<string, Entry> | undefined;
  private inflightAppended: Appended | undefined;

  /** Looks a key up in the write buffers only (pending, then in-flight; in each, the Map before the appended records). */
  private buffered(key: Buffer): Buffer | null | undefined {
    const k = bkey(key);
    const p = this.pending.get(k);
    if (p !== undefined) return p[1];
    const a = this.appended.get(key);
    if (a !== undefined) return a;
    const q = this.inflight?.get(k);
    if (q !== undefined) return q[1];
    return this.inflightAppended?.get(key);
  }

  /** Point read that sees buffered writes, including a batch being written. */
  async read(key: Buffer): Promise<Buffer | undefined> {
    const b = this.buffered(key);
    if (b !== undefined) return b ?? undefined;
    return this.db.get(key);
  }

  /**
   * Iterates [gte, lt) in key order, merging buffered writes over the database. Buffered keys are few
   * (flushed often), so they are sorted and merged on the fly.
   */
  async *iterate(gte: Buffer, lt: Buffer): AsyncGenerator<[Buffer, Buffer]> {
    const lo = bkey(gte);
    const hi = bkey(lt);
    const overlay = new Map<string, Buffer | null>();
    // Lowest layer first, so each later one overrides.
    const add = (k: Buffer, v: Buffer): void => void overlay.set(bkey(k), v);
    this.inflightAppended?.forRange(gte, lt, add);
    if (this.inflight) for (const [k, v] of this.inflight) if (k >= lo && k < hi) overlay.set(k, v[1]);
    this.appended.forRange(gte, lt, add);
    for (const [k, v] of this.pending) if (k >= lo && k < hi) overlay.set(k, v[1]);
    const extra = [...overlay.keys()].sort();
    let xi = 0;
    const it = this.db.iterator({ gte, lt });
    try {
      for (;;) {
        const entry = await it.next();
        const dk = entry ? bkey(entry[0]) : undefined;
        // Emit buffered keys that sort before the next database key.
        while (xi < extra.length && (dk === undefined || (extra[xi] as string) <= dk)) {
          const k = extra[xi++] as string;
          const v = overlay.get(k);
          if (v) yield [Buffer.from(k, 'latin1'), v];
        }
        if (!entry) return;
        if (overlay.has(dk as string)) continue; // the buffer overrides this database entry
        yield entry;
      }
    } finally {
      await it.close();
    }
  }

  /**
   * Calls f for every database entry in [gte, lt), reading in large batches. Only for use while nothing
   * is buffered (start-up), where it is much faster than iterate().
   */
  async scan(gte: Buffer, lt: Buffer, f: (k: Buffer, v: Buffer) => void): Promise<void> {
    const it = this.db.iterator({ gte, lt });
    try {
      for (;;) {
        const batch = await it.nextv(4096);
        if (batch.length === 0) return;
        for (const [k, v] of batch) f(k, v);
        // What `f` builds from a million records (the index) lives on: scavenged in small pieces.
        collectYoung();
      }
    } finally {
      await it.close();
    }
  }

  /**
   * Batches of database entries in [gte, lt) as of the moment this is called: LevelDB iterators read
   * from an implicit snapshot, and every flushed batch is consistent on its own (data with the consistent
   * index that describes it), so this is a consistent image. Buffered writes are not included. Snapshots
   * read the whole state with it, and physical compaction the history it removes.
   */
  async *snapshotBatches(gte: Buffer, lt: Buffer): AsyncGenerator<[Buffer, Buffer][]> {
    const it = this.db.iterator({ gte, lt });
    try {
      for (;;) {
        const batch = await it.nextv(1024);
        if (batch.length === 0) return;
        yield batch;
      }
    } finally {
      await it.close();
    }
  }

  /** Deletes every key in [gte, lt) (in batches), buffered writes included. */
  async clearRange(gte: Buffer, lt: Buffer): Promise<void> {
    await this.flush();
    await this.db.clear({ gte, lt });
  }

  /** Approximate bytes on disk for a key range. */
  async approximateSize(gte: Buffer, lt: Buffer): Promise<number> {
    return this.db.approximateSize(gte, lt);
  }

  async compactRange(gte: Buffer, lt: Buffer): Promise<void> {
    await this.db.compactRange(gte, lt);
  }

  async close(): Promise<void> {
    await this.flush(true);
    await this.db.close();
  }
}
