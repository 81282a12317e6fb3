// The MVCC key-value store with etcd 3.4's semantics: every write transaction that changes something
// creates one new main revision; history is kept until compacted; reads at any retained revision. The
// index and current values live in memory; history lives in the backend, keyed by revision.
import { pack, unpack } from 'msgpackr';
import { crc32 } from 'node:zlib';
import type {
  Compare,
  DeleteRangeRequest,
  DeleteRangeResponse,
  KeyValue,
  KvEvent,
  PutRequest,
  PutResponse,
  RangeRequest,
  RangeResponse,
  RequestOp,
  ResponseOp,
  StoredAlarm,
  TxnRequest,
  TxnResponse,
} from './types.js';
import type { KeyRange } from './key-range.js';
import type { VisibleRevision } from './key-index.js';
import { Backend, LEASE_PREFIX, decodeLease, leaseKey, leaseValue } from './backend.js';
import { KeyIndex } from './key-index.js';
import { newKeyIndexTree } from './index-tree.js';
import { etcdSnapshotChunks } from './etcd-snapshot.js';
import type { SnapshotMember } from './etcd-snapshot.js';
import { etcdError } from './errors.js';
import { REV_KEY_LEN, REV_PREFIX, parseRevKey, revKey } from './revision.js';
import { fromKey, keyRange, toKey } from './key-range.js';
import { DEFAULT_MAX_TXN_OPS, checkPut, checkRange, checkTxn, putCost } from './txn-check.js';
import { Lessor } from './lessor.js';
import { LeaseClocks } from './lease-clocks.js';
import { decodeRecord, decodeRecordStrings, encodeRecord, recordKey, recordLength } from './record.js';
import { SupersededBytes } from './superseded.js';
import { SLICE_BUDGET_MS, SLICE_ITEMS, runNow, runSliced, sortSliced, turn } from './sliced.js';
import type { Sliced } from './sliced.js';

export interface KvStoreOptions {
  /** Writes fail with NOSPACE once the backend holds more than this (etcd default 2 GiB). */
  readonly quotaBackendBytes?: number;
  readonly maxTxnOps?: number;
  /** Minimum lease TTL in seconds. */
  readonly minLeaseTtl?: number;
  readonly now?: () => number;
}


export type CommitListener = (rev: number, events: readonly KvEvent[]) => void;
/** A commit listener that may take its time over a revision of many events, yielding as it goes (sliced.ts). */
export type SlicedCommitListener = (rev: number, events: readonly KvEvent[]) => Sliced<void>;

const EMPTY = Buffer.alloc(0);
/** etcd's default --quota-backend-bytes. */
export const DEFAULT_QUOTA_BYTES = 2 * 1024 * 1024 * 1024;

/** A Buffer view of the same bytes (no copy). */
function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * The size of a snapshot chunk: packing one (and unpacking it on the member that installs it) is one
 * piece of work on the loop; a MiB of small records took tens of milliseconds on a loaded machine.
 */
const SNAPSHOT_CHUNK_BYTES = 256 * 1024;

/** Keys (or records) physical compaction handles per turn of the event loop. */
const COMPACT_CHUNK = 2000;

/** Records physical compaction deletes per batch written. */
const COMPACT_FLUSH = 20_000;

/** Backend bytes of a key's latest record while the key is live (what the index holds is that record). */
function liveRecordBytes(ki: KeyIndex): number {
  return REV_KEY_LEN + recordLength(ki.key.length, (ki.value as string).length, ki.lease.length);
}

/** Whether a txn deletes a key range anywhere (either branch, nested txns included). */
function deletesRange(req: TxnRequest): boolean {
  for (const op of [...(req.success ?? []), ...(req.failure ?? [])]) {
    if ('requestDeleteRange' in op && op.requestDeleteRange.rangeEnd !== undefined && op.requestDeleteRange.rangeEnd.length > 0) return true;
    if ('requestTxn' in op && deletesRange(op.requestTxn)) return true;
  }
  return false;
}

function cmpLease(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function cmpNum(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

/** One write transaction in progress: its revision, its changes so far and the events they make. */
interface WriteTxn {
  readonly main: number;
  sub: number;
  readonly events: KvEvent[];
  /** Backend bytes this txn adds (for the quota). */
  cost: number;
}

export class KvStore extends LeaseClocks {
  /** Replaced whole when a snapshot is installed (load() builds the new one aside). */
  private index = newKeyIndexTree();
  /** The bytes of superseded records by the revision that superseded them, for compaction (replaced with the index). */
  private superseded = new SupersededBytes();
  /** Revision of the last write transaction that changed something; 1 for an empty store. */
  currentRev = 1;
  /** The head revision the backend was last given by flush() (0: none yet). */
  private flushedRev = 0;
  /** Revisions below this are gone (0: never compacted). */
  compactRev = 0;
  /** The last Raft index applied to this store; stored atomically with the data it describes. */
  consistentIndex = 0;
  /** Set once a write would exceed the quota; writes stay refused until disarmed (etcd's NOSPACE alarm). */
  noSpaceAlarm = false;
  /** The cluster's alarms as applied from the log; kept in the backend like etcd's alarm bucket. */
  alarms: readonly StoredAlarm[] = [];
  /** The member's auth state (users, roles, enabled, revision) as applied from the log; opaque here, kept in the backend like etcd's auth buckets. */
  authState: unknown;
  protected readonly lessor: Lessor;
  private readonly listeners: { readonly fn: CommitListener; readonly wantsPrevKv: () => boolean; readonly sliced: SlicedCommitListener | undefined }[] = [];
  private readonly quota: number;
  private readonly maxTxnOps: number;
  /** Physical compaction running in the background (its promise), so callers can await it. */
  private compacting: Promise<void> = Promise.resolve();

  private constructor(
    private readonly backend: Backend,
    opts: KvStoreOptions,
  ) {
    super();
    this.quota = opts.quotaBackendBytes && opts.quotaBackendBytes > 0 ? opts.quotaBackendBytes : DEFAULT_QUOTA_BYTES;
    this.maxTxnOps = opts.maxTxnOps ?? DEFAULT_MAX_TXN_OPS;
    this.lessor = new Lessor(opts.minLeaseTtl ?? 2, opts.now ?? Date.now);
  }

  static async open(dir: string, opts: KvStoreOptions = {}): Promise<KvStore> {
    const backend = await Backend.open(dir);
    const s = new KvStore(backend, opts);
    await s.load();
    return s;
  }

  /** Rebuilds the in-memory index, current values and leases from the backend. */
  private async load(): Promise<void> {
    this.consistentIndex = (await this.backend.getMeta<number>('consistentIndex')) ?? 0;
    this.compactRev = (await this.backend.getMeta<number>('compactRev')) ?? 0;
    this.noSpaceAlarm = (await this.backend.getMeta<boolean>('noSpaceAlarm')) ?? false;
    this.alarms = (await this.backend.getMeta<StoredAlarm[]>('alarms')) ?? [];
    this.authState = await this.backend.getMeta<unknown>('auth');
    let size = 0;
    // Records come in revision order, keys at random: gather them in a hash map, then fill the tree
    // in key order, which is far cheaper than a million random tree inserts and lookups.
    const staging = new Map<string, KeyIndex>();
    const superseded = new SupersededBytes();
    await this.backend.scan(Buffer.from([REV_PREFIX]), Buffer.from([REV_PREFIX + 1]), (k, v) => {
      const rev = parseRevKey(k);
      const r = decodeRecordStrings(v);
      let ki = staging.get(r.key);
      if (!ki) {
        ki = new KeyIndex(r.key);
        staging.set(r.key, ki);
      }
      if (ki.isLive()) superseded.add(rev.main, liveRecordBytes(ki));
      if (r.tombstone) {
        ki.tombstone(rev.main, rev.sub);
        superseded.add(rev.main, k.length + v.length);
      } else {
        ki.put(rev.main, rev.sub, { created: r.createRevision, version: r.version });
        ki.value = r.value;
        ki.lease = r.lease;
      }
      if (rev.main > this.currentRev) this.currentRev = rev.main;
      size += k.length + v.length;
    });
    // Sorted and inserted in slices: a follower installing a snapshot of half a million keys does this
    // while it serves, and in one piece it held the loop for about a second. Built aside, then swapped in.
    const keys = await runSliced(sortSliced([...staging.keys()]));
    const index = newKeyIndexTree();
    await runSliced(
      (function* () {
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i] as string;
          index.set(key, staging.get(key) as KeyIndex);
          if (i % SLICE_ITEMS === SLICE_ITEMS - 1) yield;
        }
      })(),
    );
    this.index = index;
    this.superseded = superseded;
    this.currentRev = Math.max(this.currentRev, this.compactRev, (await this.backend.getMeta<number>('currentRev')) ?? 1);
    for await (const [k, v] of this.backend.iterate(Buffer.from([LEASE_PREFIX]), Buffer.from([LEASE_PREFIX + 1]))) {
      const { id, ttl } = decodeLease(k, v);
      this.lessor.restore(id, ttl);
      size += k.length + v.length;
    }
    // In slices too: half a million keys took 22 ms to walk in one piece, leases or not.
    const lessor = this.lessor;
    await runSliced(
      (function* () {
        let i = 0;
        for (const ki of staging.values()) {
          if (ki.isLive() && ki.lease !== '0') lessor.attach(ki.lease, ki.key);
          if (++i % SLICE_ITEMS === 0) yield;
        }
      })(),
    );
    this.backend.size = size;
    // A compaction that was recorded but not finished before a crash: finish it now.
    const done = (await this.backend.getMeta<number>('compactDone')) ?? 0;
    if (this.compactRev > done) this.compacting = this.physicallyCompact(this.compactRev);
  }

  /**
   * Calls `l` with every committed revision's events. Events carry the previous value (prevKv) only while
   * some listener's `wantsPrevKv` says it needs them: materializing it copies the old value of every key
   * changed, which a delete of 150,000 keys made a large part of its cost. `sliced`, when given, is
   * called instead of `l` for a revision applied in slices (a ranged delete), and may yield.
   */
  onCommit(l: CommitListener, wantsPrevKv: () => boolean = () => true, sliced?: SlicedCommitListener): () => void {
    const entry = { fn: l, wantsPrevKv, sliced };
    this.listeners.push(entry);
    return () => {
      const i = this.listeners.indexOf(entry);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  private prevKvWanted(): boolean {
    for (const l of this.listeners) if (l.wantsPrevKv()) return true;
    return false;
  }

  /** Bytes the backend holds (logical), as reported by Status' dbSize. */
  size(): number {
    return this.backend.size;
  }

  // ---- reads ----

  private kvFromIndex(ki: KeyIndex, v: VisibleRevision, value: Buffer, key: Buffer = fromKey(ki.key)): KeyValue {
    return { key, createRevision: v.created, modRevision: v.main, version: v.version, value, lease: ki.lease };
  }

  /** The KeyValue of a visible revision if memory has it: the key's current value, or a prefetched one. */
  private cached(ki: KeyIndex, v: VisibleRevision, prefetched?: ReadonlyMap<string, KeyValue>): KeyValue | undefined {
    const mod = ki.modified();
    if (ki.value !== undefined && mod && mod.main === v.main && mod.sub === v.sub) return this.kvFromIndex(ki, v, fromKey(ki.value));
    return prefetched?.get(`${v.main}_${v.sub}`);
  }

  /** The KeyValue of a visible revision, from memory or from the backend. */
  private async fetch(ki: KeyIndex, v: VisibleRevision): Promise<KeyValue> {
    const hit = this.cached(ki, v);
    if (hit) return hit;
    const raw = await this.backend.read(revKey(v.main, v.sub));
    // Compacted away between the index lookup and the read.
    if (!raw) throw etcdError('COMPACTED');
    const r = decodeRecord(raw);
    return { key: r.key, createRevision: r.createRevision, modRevision: v.main, version: r.version, value: r.value, lease: r.lease };
  }

  /** Current KeyValue of a live key (synchronous: from memory). */
  private currentKv(ki: KeyIndex): KeyValue | undefined {
    if (ki.value === undefined) return undefined;
    const v = ki.get(Number.MAX_SAFE_INTEGER);
    if (!v) return undefined;
    return this.kvFromIndex(ki, v, fromKey(ki.value));
  }

  /** Visits the keys of a range in key order. */
  private visit(r: KeyRange, f: (ki: KeyIndex) => boolean | void): void {
    if (r.end === undefined) {
      const ki = this.index.get(r.start);
      if (ki) f(ki);
      return;
    }
    for (const [k, ki] of this.index.entries(r.start)) {
      if (r.end !== '' && k >= r.end) break;
      if (f(ki) === false) break;
    }
  }

  /**
   * The index half of a range: how many keys are visible at `atRev` (all of them, as etcd counts) and
   * the first `limit` of them (all when limit is 0), in key order.
   */
  private *visibleSliced(r: KeyRange, atRev: number, limit: number): Sliced<{ count: number; vis: [KeyIndex, VisibleRevision][] }> {
    const vis: [KeyIndex, VisibleRevision][] = [];
    let count = 0;
    yield* this.visitSliced(r, (ki) => {
      const v = ki.get(atRev);
      if (!v) return;
      count++;
      if (limit <= 0 || vis.length < limit) vis.push([ki, v]);
    });
    return { count, vis };
  }

  /**
   * visit() yielding every SLICE_ITEMS keys. Across a pause it resumes after the last key seen instead of
   * keeping an iterator: background compaction may delete keys from the index meanwhile.
   */
  private *visitSliced(r: KeyRange, f: (ki: KeyIndex) => void): Sliced<void> {
    if (r.end === undefined) {
      this.visit(r, f);
      return;
    }
    let after: string | undefined;
    for (;;) {
      let seen = 0;
      for (const [k, ki] of this.index.entries(after ?? r.start)) {
        if (k === after) continue;
        if (r.end !== '' && k >= r.end) return;
        after = k;
        f(ki);
        if (++seen === SLICE_ITEMS) break;
      }
      if (seen < SLICE_ITEMS) return;
      yield;
    }
  }

  /** Checks a requested revision against the compacted and current ones. */
  private readRev(requested: number | undefined, head: number): number {
    const rev = requested && requested > 0 ? requested : head;
    if (rev > head) throw etcdError('FUTURE_REV');
    if (rev < this.compactRev) throw etcdError('COMPACTED');
    return rev;
  }

  /**
   * A range at the head or an older revision. The index walk and the values are gathered in slices: a
   * range of half a million keys (etcdctl get --prefix) must not hold the loop the member ticks on. The
   * revision is fixed first, and what the walk sees at it never changes (writes in between only add newer
   * revisions; compaction below it would fail the read of a value, as it does in one piece).
   */
  async range(req: RangeRequest): Promise<RangeResponse> {
    checkRange(req);
    const head = this.currentRev;
    const p = await runSliced(this.planRangeSliced(req, head));
    const kvs: KeyValue[] = [];
    let deadline = performance.now() + SLICE_BUDGET_MS;
    for (let i = 0; i < p.vis.length; i++) {
      const [ki, v] = p.vis[i] as [KeyIndex, VisibleRevision];
      kvs.push(this.cached(ki, v) ?? (await this.fetch(ki, v)));
      if (i % SLICE_ITEMS === SLICE_ITEMS - 1 && performance.now() >= deadline) {
        await turn();
        deadline = performance.now() + SLICE_BUDGET_MS;
      }
    }
    return this.finishRange(req, head, p.count, kvs);
  }

  /** A range inside a transaction whose view is at `head`; every value must be in memory or prefetched. */
  private rangeSync(req: RangeRequest, head: number, prefetched?: ReadonlyMap<string, KeyValue>): RangeResponse {
    const p = this.planRange(req, head);
    const kvs = p.vis.map(([ki, v]) => {
      const kv = this.cached(ki, v, prefetched);
      if (!kv) throw new Error(`kv: revision ${v.main}.${v.sub} was not prefetched`);
      return kv;
    });
    return this.finishRange(req, head, p.count, kvs);
  }

  private planRange(req: RangeRequest, head: number): { count: number; vis: [KeyIndex, VisibleRevision][] } {
    return runNow(this.planRangeSliced(req, head));
  }

  private *planRangeSliced(req: RangeRequest, head: number): Sliced<{ count: number; vis: [KeyIndex, VisibleRevision][] }> {
    const rev = this.readRev(req.revision, head);
    const r = keyRange(req.key, req.rangeEnd);
    if (req.countOnly) return { count: (yield* this.visibleSliced(r, rev, -1)).count, vis: [] };
    const filtered = !!(req.minModRevision || req.maxModRevision || req.minCreateRevision || req.maxCreateRevision);
    const limit = req.limit ?? 0;
    // Without sorting or filtering, fetch one more than the limit to learn whether there is more.
    const fetchAll = (req.sortOrder ?? 'NONE') !== 'NONE' || (req.sortTarget ?? 'KEY') !== 'KEY' || filtered || limit <= 0;
    return yield* this.visibleSliced(r, rev, fetchAll ? 0 : limit + 1);
  }

  /** Filters, sorts and limits as etcd's applier does; count stays the total before pruning. */
  private finishRange(req: RangeRequest, head: number, count: number, fetched: KeyValue[]): RangeResponse {
    const header = { revision: head };
    if (req.countOnly) return { header, kvs: [], more: false, count };
    let kvs = fetched;
    const sortOrder = req.sortOrder ?? 'NONE';
    const sortTarget = req.sortTarget ?? 'KEY';
    const limit = req.limit ?? 0;
    if (req.maxModRevision) kvs = kvs.filter((kv) => kv.modRevision <= (req.maxModRevision as number));
    if (req.minModRevision) kvs = kvs.filter((kv) => kv.modRevision >= (req.minModRevision as number));
    if (req.maxCreateRevision) kvs = kvs.filter((kv) => kv.createRevision <= (req.maxCreateRevision as number));
    if (req.minCreateRevision) kvs = kvs.filter((kv) => kv.createRevision >= (req.minCreateRevision as number));
    // Results come in key order; any other target sorts ascending unless told otherwise.
    const order = sortTarget !== 'KEY' && sortOrder === 'NONE' ? 'ASCEND' : sortOrder;
    if (order !== 'NONE') {
      const by: (a: KeyValue, b: KeyValue) => number =
        sortTarget === 'KEY'
          ? (a, b) => cmpBytes(a.key, b.key)
          : sortTarget === 'VERSION'
            ? (a, b) => cmpNum(a.version, b.version)
            : sortTarget === 'CREATE'
              ? (a, b) => cmpNum(a.createRevision, b.createRevision)
              : sortTarget === 'MOD'
                ? (a, b) => cmpNum(a.modRevision, b.modRevision)
                : (a, b) => cmpBytes(a.value, b.value);
      kvs.sort(order === 'ASCEND' ? by : (a, b) => by(b, a));
    }
    let more = false;
    if (limit > 0 && kvs.length > limit) {
      kvs = kvs.slice(0, limit);
      more = true;
    }
    if (req.keysOnly) kvs = kvs.map((kv) => ({ ...kv, value: EMPTY }));
    return { header, kvs, more, count };
  }

  /** The value of one key at a revision (for watch prev_kv), or undefined. */
  async kvAt(key: Uint8Array, rev: number): Promise<KeyValue | undefined> {
    const ki = this.index.get(toKey(key));
    const v = ki?.get(rev);
    if (!ki || !v) return undefined;
    try {
      return await this.fetch(ki, v);
    } catch {
      return undefined;
    }
  }

  /**
   * Events of revisions [from, to] in revision order, read from the backend (watch catch-up). Each
   * revision's events are complete and in the order the transaction made them.
   */
  async *history(from: number, to: number): AsyncGenerator<{ rev: number; event: KvEvent }> {
    for await (const [k, raw] of this.backend.iterate(revKey(from, 0), revKey(to + 1, 0))) {
      const rev = parseRevKey(k);
      const r = decodeRecord(raw);
      const event: KvEvent = r.tombstone
        ? { type: 'DELETE', kv: { key: r.key, createRevision: 0, modRevision: rev.main, version: 0, value: EMPTY, lease: '0' } }
        : { type: 'PUT', kv: { key: r.key, createRevision: r.createRevision, modRevision: rev.main, version: r.version, value: r.value, lease: r.lease } };
      yield { rev: rev.main, event };
    }
  }

  // ---- writes ----

  private beginWrite(): WriteTxn {
    return { main: this.currentRev + 1, sub: 0, events: [], cost: 0 };
  }

  /** Buffers the record of one change; returns its backend bytes. */
  private writeRecord(tx: WriteTxn, kv: KeyValue, tomb: boolean): number {
    const k = revKey(tx.main, tx.sub);
    const v = encodeRecord({ key: kv.key, value: kv.value, createRevision: kv.createRevision, version: kv.version, lease: kv.lease, tombstone: tomb });
    this.backend.putRecord(k, v);
    tx.cost += k.length + v.length;
    tx.sub++;
    return k.length + v.length;
  }

  /** `keyBytes`: the key as bytes when the caller has them (the request's), saving a copy from `key`. */
  private doPut(tx: WriteTxn, key: string, value: Buffer, lease: string, wantPrev: boolean, keyBytes?: Buffer): KeyValue | undefined {
    let ki = this.index.get(key);
    if (!ki) {
      ki = new KeyIndex(key);
      this.index.set(key, ki);
    }
    // The previous value is only materialized when someone will look at it (events, prev_kv).
    const prev = wantPrev || this.prevKvWanted() ? this.currentKv(ki) : undefined;
    if (ki.lease !== '0') this.lessor.detach(ki.lease, key);
    if (ki.isLive()) this.superseded.add(tx.main, liveRecordBytes(ki));
    ki.put(tx.main, tx.sub);
    ki.value = value.toString('latin1');
    ki.lease = lease;
    if (lease !== '0') this.lessor.attach(lease, key);
    const v = ki.get(tx.main) as VisibleRevision;
    const kv = this.kvFromIndex(ki, v, value, keyBytes);
    this.writeRecord(tx, kv, false);
    tx.events.push(prev ? { type: 'PUT', kv, prevKv: prev } : { type: 'PUT', kv });
    return prev;
  }

  private doDelete(tx: WriteTxn, r: KeyRange): number {
    return runNow(this.deleteKeys(tx, r, undefined));
  }

  /**
   * Deletes the live keys of a range (a tombstone each, in key order), collecting their previous values
   * into `prevKvs` when given, yielding as visitSliced() does. The tombstones are at tx.main, above
   * currentRev, so reads at the head do not see them until endWrite makes the revision visible.
   */
  private *deleteKeys(tx: WriteTxn, r: KeyRange, prevKvs: KeyValue[] | undefined): Sliced<number> {
    const wantPrev = this.prevKvWanted();
    let deleted = 0;
    const one = (ki: KeyIndex): void => {
      if (!ki.isLive()) return;
      const prev = wantPrev || prevKvs ? this.currentKv(ki) : undefined;
      if (prevKvs && prev) prevKvs.push(prev);
      if (ki.lease !== '0') this.lessor.detach(ki.lease, ki.key);
      const kv: KeyValue = { key: prev ? prev.key : fromKey(ki.key), createRevision: 0, modRevision: tx.main, version: 0, value: EMPTY, lease: '0' };
      const live = liveRecordBytes(ki);
      ki.tombstone(tx.main, tx.sub);
      // The tombstone dies with the record it supersedes: a compaction at or above tx.main removes both.
      this.superseded.add(tx.main, live + this.writeRecord(tx, kv, true));
      tx.events.push(wantPrev && prev ? { type: 'DELETE', kv, prevKv: prev } : { type: 'DELETE', kv });
      deleted++;
    };
    yield* this.visitSliced(r, one);
    return deleted;
  }

  /** Ends a write transaction: bumps the revision if it changed anything and tells the listeners. */
  private endWrite(tx: WriteTxn, consistentIndex: number | undefined): number {
    if (this.commitRev(tx, consistentIndex)) for (const l of this.listeners) l.fn(tx.main, tx.events);
    return this.currentRev;
  }

  /** endWrite() for a txn applied in slices: listeners that can take a revision in slices do. */
  private *endWriteSliced(tx: WriteTxn, consistentIndex: number | undefined): Sliced<number> {
    if (this.commitRev(tx, consistentIndex)) {
      for (const l of this.listeners) {
        if (l.sliced) yield* l.sliced(tx.main, tx.events);
        else l.fn(tx.main, tx.events);
      }
    }
    return this.currentRev;
  }

  /** Records the consistent index and makes the txn's revision the head; false if it changed nothing. */
  private commitRev(tx: WriteTxn, consistentIndex: number | undefined): boolean {
    if (consistentIndex !== undefined) {
      this.consistentIndex = consistentIndex;
      this.backend.putMeta('consistentIndex', consistentIndex);
    }
    if (tx.sub === 0) return false;
    this.currentRev = tx.main;
    this.backend.size += tx.cost;
    return true;
  }

  /** Records that a Raft entry was applied without changing the key space (idempotent replay). */
  markApplied(consistentIndex: number): void {
    this.consistentIndex = consistentIndex;
    this.backend.putMeta('consistentIndex', consistentIndex);
  }

  /** Refuses writes that add data once the quota is hit (etcd's NOSPACE alarm). */
  private checkQuota(cost: number): void {
    if (this.noSpaceAlarm) throw etcdError('NO_SPACE');
    if (cost > 0 && this.backend.size + cost > this.quota) {
      this.noSpaceAlarm = true;
      this.backend.putMeta('noSpaceAlarm', true);
      throw etcdError('NO_SPACE');
    }
  }

  disarmNoSpace(): void {
    this.noSpaceAlarm = false;
    this.backend.putMeta('noSpaceAlarm', false);
  }

  /**
   * Applies the cluster's alarms (persisted with the next consistent index, so with the entry that changed
   * them). A NOSPACE among them refuses writes that add data, here as on every member.
   */
  /** Applies a change to the auth state, persisted with the next consistent index as the alarms are. */
  setAuthState(state: unknown): void {
    this.authState = state;
    this.backend.putMeta('auth', state);
  }

  setAlarms(alarms: readonly StoredAlarm[]): void {
    this.alarms = alarms;
    this.backend.putMeta('alarms', alarms);
    this.noSpaceAlarm = alarms.some((a) => a.alarm === 'NOSPACE');
    this.backend.putMeta('noSpaceAlarm', this.noSpaceAlarm);
  }

  /**
   * A Put: a one-op transaction, applied without the transaction machinery when no write is queued (it is
   * the hot path). The checks run in the transaction's order: the request, then the key and lease it
   * needs, then the quota.
   */
  put(req: PutRequest, consistentIndex?: number): Promise<PutResponse> {
    if (!this.canPutNow()) return this.putAsTxn(req, consistentIndex);
    try {
      return Promise.resolve(this.putNow(req, consistentIndex));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Whether putNow() may run: no write transaction is queued ahead (they wait on reads of the backend). */
  canPutNow(): boolean {
    return this.queuedWrites === 0;
  }

  /** put(), applied before it returns (only when canPutNow()); etcd's errors are thrown. */
  putNow(req: PutRequest, consistentIndex?: number): PutResponse {
    checkPut(req);
    const key = toKey(req.key);
    this.precheckPut(req, key);
    const cost = putCost(req);
    if (cost > 0) this.checkQuota(cost);
    const tx = this.beginWrite();
    const res = this.execPut(tx, req, key);
    this.endWrite(tx, consistentIndex);
    return res;
  }

  private async putAsTxn(req: PutRequest, consistentIndex: number | undefined): Promise<PutResponse> {
    const res = await this.txn({ success: [{ requestPut: req }] }, consistentIndex);
    const op = res.responses[0];
    if (!op || !('responsePut' in op)) throw new Error('put produced no response');
    return op.responsePut;
  }

  async deleteRange(req: DeleteRangeRequest, consistentIndex?: number): Promise<DeleteRangeResponse> {
    const res = await this.txn({ success: [{ requestDeleteRange: req }] }, consistentIndex);
    const op = res.responses[0];
    if (!op || !('responseDeleteRange' in op)) throw new Error('delete produced no response');
    return op.responseDeleteRange;
  }

  private compareOne(c: Compare): boolean {
    const r = keyRange(c.key, c.rangeEnd);
    const kvs: KeyValue[] = [];
    this.visit(r, (ki) => {
      const kv = this.currentKv(ki);
      if (kv) kvs.push(kv);
    });
    if (kvs.length === 0) {
      // A missing key has no value to compare; every other target compares against zero.
      if (c.target === 'VALUE') return false;
      return this.compareKv(c, { key: c.key, createRevision: 0, modRevision: 0, version: 0, value: EMPTY, lease: '0' });
    }
    return kvs.every((kv) => this.compareKv(c, kv));
  }

  private compareKv(c: Compare, kv: KeyValue): boolean {
    let res: number;
    switch (c.target) {
      case 'VALUE':
        res = cmpBytes(kv.value, c.value ?? EMPTY);
        break;
      case 'CREATE':
        res = cmpNum(kv.createRevision, c.createRevision ?? 0);
        break;
      case 'MOD':
        res = cmpNum(kv.modRevision, c.modRevision ?? 0);
        break;
      case 'VERSION':
        res = cmpNum(kv.version, c.version ?? 0);
        break;
      case 'LEASE':
        res = cmpLease(kv.lease, c.lease ?? '0');
        break;
    }
    switch (c.result) {
      case 'EQUAL':
        return res === 0;
      case 'NOT_EQUAL':
        return res !== 0;
      case 'GREATER':
        return res > 0;
      case 'LESS':
        return res < 0;
    }
  }

  /**
   * The branch a txn (and each nested txn) takes, decided up front against the state before the txn,
   * as etcd does: nested compares do not see the outer txn's writes.
   */
  private choosePath(req: TxnRequest): { succeeded: boolean; ops: readonly RequestOp[]; nested: Map<TxnRequest, boolean> } {
    const nested = new Map<TxnRequest, boolean>();
    const walk = (t: TxnRequest): boolean => {
      const ok = (t.compare ?? []).every((c) => this.compareOne(c));
      nested.set(t, ok);
      for (const op of (ok ? t.success : t.failure) ?? []) if ('requestTxn' in op) walk(op.requestTxn);
      return ok;
    };
    const succeeded = walk(req);
    return { succeeded, ops: (succeeded ? req.success : req.failure) ?? [], nested };
  }

  /** Checks the chosen path before writing anything, so a failing txn changes nothing. */
  private precheck(ops: readonly RequestOp[], nested: Map<TxnRequest, boolean>, head: number): { writes: boolean } {
    let writes = false;
    for (const op of ops) {
      if ('requestRange' in op) {
        this.readRev(op.requestRange.revision, head);
      } else if ('requestPut' in op) {
        writes = true;
        this.precheckPut(op.requestPut);
      } else if ('requestDeleteRange' in op) {
        writes = true;
      } else if ('requestTxn' in op) {
        const t = op.requestTxn;
        const branch = (nested.get(t) ? t.success : t.failure) ?? [];
        if (this.precheck(branch, nested, head).writes) writes = true;
      }
    }
    return { writes };
  }

  /** A put that ignores the value or lease needs the key to exist; a put with a lease needs the lease. */
  private precheckPut(p: PutRequest, key?: string): void {
    if (p.ignoreValue || p.ignoreLease) {
      const ki = this.index.get(key ?? toKey(p.key));
      if (!ki || !ki.isLive()) throw etcdError('KEY_NOT_FOUND');
    }
    if (p.lease && p.lease !== '0' && !this.lessor.lookup(p.lease)) throw etcdError('LEASE_NOT_FOUND');
  }

  /**
   * Applies a transaction (Put and DeleteRange are one-op transactions). Writes are serialized:
   * revisions are assigned in call order. A txn runs synchronously unless it reads history from disk
   * (a range at an older revision); then its reads are fetched first and it waits its turn.
   */
  txn(req: TxnRequest, consistentIndex?: number): Promise<TxnResponse> {
    if (this.canTxnNow(req)) {
      try {
        return Promise.resolve(this.txnNow(req, consistentIndex));
      } catch (e) {
        return Promise.reject(e);
      }
    }
    this.queuedWrites++;
    const run = this.writeChain
      .then(async () => this.applyTxnSliced(req, consistentIndex, await this.prefetch(req)))
      .finally(() => {
        this.queuedWrites--;
      });
    this.writeChain = run.catch(() => undefined);
    return run;
  }

  /**
   * Whether txnNow() may run: no write is queued ahead, the txn reads no history from disk, and it deletes
   * no range (any number of keys: it is applied in slices).
   */
  canTxnNow(req: TxnRequest): boolean {
    return this.queuedWrites === 0 && !this.readsHistory(req) && !deletesRange(req);
  }

  /** txn(), applied before it returns (only when canTxnNow()); etcd's errors are thrown. */
  txnNow(req: TxnRequest, consistentIndex?: number): TxnResponse {
    return this.applyTxn(req, consistentIndex, undefined);
  }

  private writeChain: Promise<unknown> = Promise.resolve();
  private queuedWrites = 0;

  /** Ranges at an explicit older revision, anywhere in the txn: their values may be on disk only. */
  private historyRanges(req: TxnRequest, out: RangeRequest[] = []): RangeRequest[] {
    for (const op of [...(req.success ?? []), ...(req.failure ?? [])]) {
      if ('requestRange' in op && op.requestRange.revision && op.requestRange.revision < this.currentRev) out.push(op.requestRange);
      else if ('requestTxn' in op) this.historyRanges(op.requestTxn, out);
    }
    return out;
  }

  private readsHistory(req: TxnRequest): boolean {
    return this.historyRanges(req).length > 0;
  }

  /** Reads the on-disk values those ranges will need (history never changes, so reading early is safe). */
  private async prefetch(req: TxnRequest): Promise<Map<string, KeyValue>> {
    const out = new Map<string, KeyValue>();
    for (const rr of this.historyRanges(req)) {
      let plan;
      try {
        plan = this.planRange(rr, this.currentRev);
      } catch {
        continue; // the txn itself will report the error, in etcd's order
      }
      for (const [ki, v] of plan.vis) out.set(`${v.main}_${v.sub}`, await this.fetch(ki, v));
    }
    return out;
  }

  private applyTxn(req: TxnRequest, consistentIndex: number | undefined, prefetched: ReadonlyMap<string, KeyValue> | undefined): TxnResponse {
    const { succeeded, ops, nested } = this.planTxn(req, consistentIndex);
    const tx = this.beginWrite();
    const responses = this.execOps(tx, ops, nested, prefetched);
    const rev = this.endWrite(tx, consistentIndex);
    return { header: { revision: rev }, succeeded, responses };
  }

  /**
   * applyTxn() in slices (a txn with a ranged delete: it may touch any number of keys). Flushes are held
   * until the revision is complete, so a restart never finds half of it on disk beside the old consistent
   * index; its tombstones are above currentRev meanwhile, invisible to reads until endWrite.
   */
  private async applyTxnSliced(req: TxnRequest, consistentIndex: number | undefined, prefetched: ReadonlyMap<string, KeyValue> | undefined): Promise<TxnResponse> {
    const { succeeded, ops, nested } = this.planTxn(req, consistentIndex);
    const release = this.backend.hold();
    try {
      const tx = this.beginWrite();
      const responses = await runSliced(this.execOpsSliced(tx, ops, nested, prefetched));
      const rev = await runSliced(this.endWriteSliced(tx, consistentIndex));
      return { header: { revision: rev }, succeeded, responses };
    } finally {
      release();
    }
  }

  /** The checks before a txn writes anything, and the branch it takes. */
  private planTxn(req: TxnRequest, consistentIndex: number | undefined): ReturnType<KvStore['choosePath']> {
    // A txn from the Raft log (consistentIndex given) was checked by the member that proposed it, as etcd
    // checks only at its API: again here is CPU on every member (a bulk txn's duplicate-key check is a
    // string per put), and this member's own op limit could even refuse what the proposer's allowed.
    if (consistentIndex === undefined) checkTxn(req, this.maxTxnOps);
    const path = this.choosePath(req);
    const { writes } = this.precheck(path.ops, path.nested, this.currentRev);
    // Like etcd's capped applier: only writes that add data are refused; deletes still free space.
    if (writes) {
      const cost = this.pathPutCost(path.ops, path.nested);
      if (cost > 0) this.checkQuota(cost);
    }
    return path;
  }

  /** Approximate bytes the chosen path's puts add (0 when it only deletes or reads). */
  private pathPutCost(ops: readonly RequestOp[], nested: Map<TxnRequest, boolean>): number {
    let cost = 0;
    for (const op of ops) {
      if ('requestPut' in op) cost += putCost(op.requestPut);
      else if ('requestTxn' in op) cost += this.pathPutCost((nested.get(op.requestTxn) ? op.requestTxn.success : op.requestTxn.failure) ?? [], nested);
    }
    return cost;
  }

  /** The revision a txn's reads see: its base revision, or the next one once it has written. */
  private headOf(tx: WriteTxn): number {
    return tx.sub > 0 ? tx.main : tx.main - 1;
  }

  private execOps(tx: WriteTxn, ops: readonly RequestOp[], nested: Map<TxnRequest, boolean>, prefetched: ReadonlyMap<string, KeyValue> | undefined): ResponseOp[] {
    return runNow(this.execOpsSliced(tx, ops, nested, prefetched));
  }

  /** The chosen path's ops in order; a ranged delete yields between slices of its keys. */
  private *execOpsSliced(tx: WriteTxn, ops: readonly RequestOp[], nested: Map<TxnRequest, boolean>, prefetched: ReadonlyMap<string, KeyValue> | undefined): Sliced<ResponseOp[]> {
    const out: ResponseOp[] = [];
    for (const op of ops) {
      if ('requestRange' in op) {
        out.push({ responseRange: this.rangeSync(op.requestRange, this.headOf(tx), prefetched) });
      } else if ('requestPut' in op) {
        out.push({ responsePut: this.execPut(tx, op.requestPut) });
      } else if ('requestDeleteRange' in op) {
        const d = op.requestDeleteRange;
        const prevKvs: KeyValue[] = [];
        const deleted = yield* this.deleteKeys(tx, keyRange(d.key, d.rangeEnd), d.prevKv ? prevKvs : undefined);
        out.push({ responseDeleteRange: { header: { revision: this.headOf(tx) }, deleted, prevKvs } });
      } else {
        const t = op.requestTxn;
        const ok = nested.get(t) ?? false;
        const responses = yield* this.execOpsSliced(tx, (ok ? t.success : t.failure) ?? [], nested, prefetched);
        out.push({ responseTxn: { header: { revision: this.headOf(tx) }, succeeded: ok, responses } });
      }
    }
    return out;
  }

  private execPut(tx: WriteTxn, p: PutRequest, key = toKey(p.key)): PutResponse {
    let value = p.value ? asBuffer(p.value) : EMPTY;
    let lease = p.lease ?? '0';
    if (p.ignoreValue || p.ignoreLease) {
      // precheck() made sure the key exists.
      const ki = this.index.get(key) as KeyIndex;
      if (p.ignoreValue) value = fromKey(ki.value as string);
      if (p.ignoreLease) lease = ki.lease;
    }
    const prev = this.doPut(tx, key, value, lease, p.prevKv === true, asBuffer(p.key));
    return { header: { revision: tx.main }, ...(p.prevKv && prev ? { prevKv: prev } : {}) };
  }

  // ---- leases ----
  // The lessor is the store's own: members ask these (and LeaseClocks' clocks), so what lives in the store is changed only here.

  /** Applies a LeaseGrant. */
  leaseGrant(id: string, ttl: number, consistentIndex?: number): { id: string; ttl: number } {
    this.checkQuota(1);
    const l = this.lessor.grant(id, ttl);
    const k = leaseKey(id);
    const v = leaseValue(l.ttl);
    this.backend.put(k, v);
    this.backend.size += k.length + v.length;
    if (consistentIndex !== undefined) this.markApplied(consistentIndex);
    return { id, ttl: l.ttl };
  }

  /** Applies a LeaseRevoke: the lease's keys are deleted in one revision. */
  leaseRevoke(id: string, consistentIndex?: number): number {
    const ttl = this.lessor.lookup(id)?.ttl;
    const keys = this.lessor.revoke(id);
    const k = leaseKey(id);
    this.backend.del(k);
    // The record's bytes as granted, as start-up counts them (ttl is known: revoke throws for no lease).
    this.backend.size = Math.max(0, this.backend.size - k.length - leaseValue(ttl as number).length);
    const tx = this.beginWrite();
    for (const k of keys) this.doDelete(tx, { start: k, end: undefined });
    return this.endWrite(tx, consistentIndex);
  }

  // ---- compaction ----

  /**
   * Applies a Compact: revisions below `rev` become unreadable at once; superseded records are removed
   * in the background. Returns a promise for the physical removal (await it for `physical: true`).
   */
  compact(rev: number, consistentIndex?: number): { done: Promise<void> } {
    if (rev <= this.compactRev) throw etcdError('COMPACTED');
    if (rev > this.currentRev) throw etcdError('FUTURE_REV');
    this.compactRev = rev;
    this.backend.putMeta('compactRev', rev);
    // Keep the head revision on record even if every key it wrote gets compacted away.
    this.backend.putMeta('currentRev', this.currentRev);
    if (consistentIndex !== undefined) this.markApplied(consistentIndex);
    const prev = this.compacting;
    this.compacting = prev.then(() => this.physicallyCompact(rev));
    return { done: this.compacting };
  }

  /**
   * Drops what compaction at `rev` made unreachable: history in the key index, keys left with none, and
   * their records in the backend. The index says which records those are, and the superseded-bytes ledger
   * what they weigh, so nothing is read back: reading two million records (a native buffer for each key and
   * value, freed by the garbage collector in bulk) held the loop 100-400 ms at a time inside the allocator.
   * It works a chunk of keys per turn of the event loop, so a large key space (150,000 keys: half a second
   * in one piece) never holds up the member's reads, writes and heartbeats. That is safe while writes go
   * on: they only add revisions above `rev`, a chunk drops the keys it emptied before it yields, and the
   * next chunk resumes from the last key it saw. A record still in the write buffers is deleted there.
   */
  private async physicallyCompact(rev: number): Promise<void> {
    const backend = this.backend;
    const drop = (main: number, sub: number): void => backend.del(revKey(main, sub));
    let after: string | undefined;
    for (;;) {
      const emptied: string[] = [];
      let seen = 0;
      for (const [k, ki] of this.index.entries(after)) {
        if (k === after) continue;
        ki.compact(rev, drop);
        if (ki.hasNoHistory()) emptied.push(k);
        after = k;
        if (++seen === COMPACT_CHUNK) break;
      }
      for (const k of emptied) this.index.delete(k);
      // What compaction removes no read can reach, and removing it again after a crash is harmless, so it
      // may reach the disk in pieces: two million deletes in one buffer were two million live entries.
      if (backend.pendingCount() >= COMPACT_FLUSH) await backend.flush();
      if (seen < COMPACT_CHUNK) break;
      await turn();
    }
    backend.size = Math.max(0, backend.size - this.superseded.takeUpTo(rev));
    // A restart finds compactDone below compactRev and compacts again; deleting what is gone is harmless.
    backend.putMeta('compactDone', rev);
    await backend.flush();
  }

  /** Waits for background compaction to finish. */
  async compacted(): Promise<void> {
    await this.compacting;
  }

  // ---- hash, persistence ----

  /**
   * A CRC32 of the key space at `rev` as history records: every record above the compacted revision,
   * plus each key's kept record at it. Equal on members with equal history, whatever their physical
   * compaction progress.
   */
  async hashKV(rev = 0): Promise<{ hash: number; compactRevision: number; revision: number }> {
    const at = rev > 0 ? rev : this.currentRev;
    if (at > this.currentRev) throw etcdError('FUTURE_REV');
    if (at < this.compactRev) throw etcdError('COMPACTED');
    let h = 0;
    for await (const [k, raw] of this.backend.iterate(revKey(0, 0), revKey(at + 1, 0))) {
      const r = parseRevKey(k);
      if (r.main <= this.compactRev) {
        const v = this.index.get(recordKey(raw))?.get(this.compactRev);
        if (!v || v.main !== r.main || v.sub !== r.sub) continue;
      }
      h = crc32(k, h);
      h = crc32(raw, h);
    }
    return { hash: h >>> 0, compactRevision: this.compactRev, revision: this.currentRev };
  }

  /**
   * The whole state as a stream of chunks (each a msgpack array of [key, value] records), for sending a
   * member a snapshot or saving one. A consistent image of what is on disk once buffered writes land.
   */
  async *snapshot(chunkBytes = SNAPSHOT_CHUNK_BYTES): AsyncGenerator<Buffer> {
    await this.flush();
    let batch: [Buffer, Buffer][] = [];
    let size = 0;
    for await (const entries of this.backend.snapshotBatches(Buffer.from([0]), Buffer.from([0xff]))) {
      for (const [k, v] of entries) {
        batch.push([k, v]);
        size += k.length + v.length;
        if (size >= chunkBytes) {
          yield pack(batch);
          batch = [];
          size = 0;
        }
      }
    }
    if (batch.length > 0) yield pack(batch);
  }

  /** The whole state in etcd's bbolt format (etcd-snapshot.ts), in chunks: what Maintenance.Snapshot sends. */
  async *etcdSnapshot(members: readonly SnapshotMember[]): AsyncGenerator<Buffer> {
    await this.flush();
    yield* etcdSnapshotChunks(this.backend.snapshotBatches(Buffer.from([0]), Buffer.from([0xff])), members);
  }

  /**
   * Replaces this store's contents with a snapshot stream, in place (a follower installing the leader's
   * snapshot). Commit listeners stay; restore listeners are told so watchers can catch up.
   */
  async replaceWith(chunks: AsyncIterable<Uint8Array>): Promise<void> {
    await this.writeChain;
    await this.compacting.catch(() => undefined);
    await this.backend.clearRange(Buffer.from([0]), Buffer.from([0xff]));
    for await (const chunk of chunks) {
      for (const [k, v] of unpack(chunk) as [Buffer, Buffer][]) this.backend.put(k, v);
      await this.backend.flush();
    }
    await this.backend.flush(true);
    this.index.clear();
    this.lessor.clear();
    this.currentRev = 1;
    this.flushedRev = 0;
    this.compactRev = 0;
    this.consistentIndex = 0;
    this.noSpaceAlarm = false;
    this.alarms = [];
    this.authState = undefined;
    this.compacting = Promise.resolve();
    await this.load();
    for (const l of this.restoreListeners) l();
  }

  private readonly restoreListeners: (() => void)[] = [];

  /** Called after replaceWith(): the history under every watcher changed. Returns an unsubscribe. */
  onRestore(l: () => void): () => void {
    this.restoreListeners.push(l);
    return () => {
      const i = this.restoreListeners.indexOf(l);
      if (i >= 0) this.restoreListeners.splice(i, 1);
    };
  }

  /** Rewrites the on-disk files compactly (etcd's defragment; LevelDB compaction here). */
  async defragment(): Promise<void> {
    await this.flush();
    await this.backend.compactRange(Buffer.from([0]), Buffer.from([0xff]));
  }

  /** Replaces the store in `dir` with a snapshot stream, then opens it. */
  static async restore(dir: string, chunks: AsyncIterable<Uint8Array>, opts: KvStoreOptions = {}): Promise<KvStore> {
    const backend = await Backend.open(dir);
    await backend.clearRange(Buffer.from([0]), Buffer.from([0xff]));
    for await (const chunk of chunks) {
      for (const [k, v] of unpack(chunk) as [Buffer, Buffer][]) backend.put(k, v);
      await backend.flush();
    }
    await backend.close();
    return KvStore.open(dir, opts);
  }

  /** Writes buffered changes to disk (with the consistent index in the same batch). */
  async flush(sync = false): Promise<void> {
    // The member flushes every 100 ms: an idle store has nothing to write, not even its unchanged head revision.
    if (this.currentRev !== this.flushedRev) {
      this.backend.putMeta('currentRev', this.currentRev);
      this.flushedRev = this.currentRev;
    }
    await this.backend.flush(sync);
  }

  async close(): Promise<void> {
    await this.compacting.catch(() => undefined);
    this.backend.putMeta('currentRev', this.currentRev);
    await this.backend.close();
  }

  /** Number of keys in the index (live or with retained history). */
  indexSize(): number {
    return this.index.size;
  }
}
