// An etcd 3.4 snapshot (`etcdctl snapshot save`: etcd's bbolt backend, then the sha256 of it) turned into
// the records of Setpoint's backend, so a cluster moving from etcd keeps its keys, values, revisions
// (create, mod, version), leases and compacted revision. The buckets read (etcd-snapshot.ts says what
// each holds): key, lease, meta, and auth, authUsers and authRoles for the users, roles, permissions,
// enabled flag and auth revision (read strictly, before anything else: a malformed record refuses the
// whole file, so nothing half-imported is left to start on). Members are not taken: a restore names the
// new cluster's members, as etcd's does. The hash is checked as etcd checks it: a file whose size is a multiple of 512 plus 32 ends
// with a sha256 of the rest, which must match unless the caller skips the check; one without it is
// refused unless the caller skips the check (etcd's own words in both errors).
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { pack } from 'msgpackr';
import { formatRecord, leaseKey, leaseValue, metaKey } from './backend.js';
import { WIRE_LEN, WIRE_VARINT, varintValue, wireFields } from './pb.js';
import { BoltReader } from './bolt-reader.js';
import { AuthRecordError, readEtcdAuthBuckets } from './etcd-auth-records.js';
import { encodeRecord } from './record.js';
import { revKey } from './revision.js';

const SHA256_LEN = 32;
/** The msgpack chunks KvStore.restore takes are cut at about this many bytes. */
const CHUNK_BYTES = 1 << 20;

export class SnapshotImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotImportError';
  }
}

export interface ImportSummary {
  /** The highest revision the snapshot holds (what the restored store's current revision becomes). */
  readonly revision: number;
  readonly compactRevision: number;
  /** Revisions (records) taken in. */
  readonly records: number;
  readonly leases: number;
  /** The consistent index etcd had applied when it took the snapshot (informational). */
  readonly etcdConsistentIndex: number;
  /** Present and checked, present and skipped, or absent and skipped. */
  readonly hash: 'verified' | 'skipped';
  /** The auth state brought over. */
  readonly auth: { readonly users: number; readonly roles: number; readonly enabled: boolean; readonly revision: number };
}

/** Checks the trailing sha256 (etcd's rule); returns how many bytes are the database. */
export function checkSnapshotHash(path: string, skipHashCheck: boolean): { dbBytes: number; verified: boolean } {
  const size = statSync(path).size;
  const hasHash = size % 512 === SHA256_LEN;
  if (!hasHash) {
    if (!skipHashCheck) throw new SnapshotImportError('snapshot missing hash but --skip-hash-check=false');
    return { dbBytes: size, verified: false };
  }
  const dbBytes = size - SHA256_LEN;
  if (skipHashCheck) return { dbBytes, verified: false };
  const h = createHash('sha256');
  const fd = openSync(path, 'r');
  const buf = Buffer.alloc(1 << 20);
  let expected: Buffer;
  try {
    for (let pos = 0; pos < dbBytes; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, dbBytes - pos), pos);
      if (n === 0) throw new SnapshotImportError(`${path}: the file shrank while it was read`);
      h.update(buf.subarray(0, n));
      pos += n;
    }
    expected = Buffer.alloc(SHA256_LEN);
    readSync(fd, expected, 0, SHA256_LEN, dbBytes);
  } finally {
    closeSync(fd);
  }
  const got = h.digest();
  if (!got.equals(expected)) throw new SnapshotImportError(`expected sha256 [${[...expected].join(' ')}], got [${[...got].join(' ')}]`);
  return { dbBytes, verified: true };
}

/** A protobuf message's fields (mvccpb.KeyValue, leasepb.Lease): varints as bigint, length-delimited as bytes. */
function fields(b: Buffer, what: string): Map<number, bigint | Buffer> {
  const out = new Map<number, bigint | Buffer>();
  const it = wireFields(b);
  for (let r = it.next(); ; r = it.next()) {
    if (r.done === true) {
      if (!r.value) throw new SnapshotImportError(`${what}: not a protobuf message etcd writes (truncated, or a wire type it does not use)`);
      return out;
    }
    const f = r.value;
    if (f.wire === WIRE_VARINT) out.set(f.no, varintValue(b, f));
    else if (f.wire === WIRE_LEN) out.set(f.no, b.subarray(f.start, f.end));
  }
}

const int = (m: Map<number, bigint | Buffer>, f: number): bigint => {
  const v = m.get(f);
  return typeof v === 'bigint' ? BigInt.asIntN(64, v) : 0n;
};
const bytes = (m: Map<number, bigint | Buffer>, f: number): Buffer => {
  const v = m.get(f);
  return Buffer.isBuffer(v) ? v : Buffer.alloc(0);
};

/** etcd's revision bytes: 8-byte big-endian main, '_', 8-byte sub, then 't' for a tombstone. */
function parseEtcdRev(k: Buffer): { main: number; sub: number; tombstone: boolean } {
  if ((k.length !== 17 && k.length !== 18) || k[8] !== 0x5f) throw new SnapshotImportError(`key bucket: ${k.toString('hex')} is not a revision`);
  const main = k.readBigUInt64BE(0);
  const sub = k.readBigUInt64BE(9);
  if (main > BigInt(Number.MAX_SAFE_INTEGER) || sub > BigInt(Number.MAX_SAFE_INTEGER)) throw new SnapshotImportError(`key bucket: revision ${main}_${sub} is beyond 2^53`);
  return { main: Number(main), sub: Number(sub), tombstone: k.length === 18 && k[17] === 0x74 };
}

function metaRev(v: Buffer | undefined): number {
  return v === undefined || v.length < 8 ? 0 : Number(v.readBigUInt64BE(0));
}

/**
 * Reads the snapshot at `path` and yields Setpoint backend chunks (msgpack arrays of [key, value], as
 * KvStore.restore takes them), the store's meta with `consistentIndex` set as told (the new cluster's
 * bootstrap index: its log starts afresh). `summary` is filled in once the generator is done.
 */
export function* etcdSnapshotRecords(path: string, o: { consistentIndex: number; skipHashCheck?: boolean }, summary: { value?: ImportSummary }): Generator<Buffer> {
  const { dbBytes, verified } = checkSnapshotHash(path, o.skipHashCheck === true);
  const bolt = BoltReader.open(path, dbBytes);
  try {
    const names = new Set(bolt.bucketNames());
    if (!names.has('key') || !names.has('meta')) throw new SnapshotImportError(`${path}: not an etcd snapshot (buckets: ${[...names].join(', ') || 'none'})`);
    const bucket = (name: string): Iterable<readonly [Buffer, Buffer]> => (names.has(name) ? bolt.bucket(name) : []);
    let auth;
    try {
      auth = readEtcdAuthBuckets(bucket('auth'), bucket('authUsers'), bucket('authRoles'));
    } catch (e) {
      if (e instanceof AuthRecordError) throw new SnapshotImportError(`${path}: ${e.message}`);
      throw e;
    }
    let batch: [Buffer, Buffer][] = [];
    let batchBytes = 0;
    /** Full chunks waiting to be yielded: every add() may complete one. */
    const ready: Buffer[] = [];
    const add = (k: Buffer, v: Buffer): void => {
      batch.push([k, v]);
      batchBytes += k.length + v.length;
      if (batchBytes < CHUNK_BYTES) return;
      ready.push(pack(batch));
      batch = [];
      batchBytes = 0;
    };
    const meta = new Map<string, Buffer>([...bolt.bucket('meta')].map(([k, v]) => [k.toString('latin1'), v]));
    const finished = metaRev(meta.get('finishedCompactRev'));
    const scheduled = Math.max(finished, metaRev(meta.get('scheduledCompactRev')));
    let revision = 0;
    let records = 0;
    for (const [k, v] of bolt.bucket('key')) {
      const rev = parseEtcdRev(k);
      const kv = fields(v, `key bucket revision ${rev.main}_${rev.sub}`);
      const key = bytes(kv, 1);
      const lease = int(kv, 6);
      const record = encodeRecord({
        key,
        value: rev.tombstone ? Buffer.alloc(0) : bytes(kv, 5),
        createRevision: rev.tombstone ? 0 : Number(int(kv, 2)),
        version: rev.tombstone ? 0 : Number(int(kv, 4)),
        lease: rev.tombstone ? '0' : lease.toString(),
        tombstone: rev.tombstone,
      });
      if (rev.main > revision) revision = rev.main;
      records++;
      add(revKey(rev.main, rev.sub), record);
      yield* ready.splice(0);
    }
    let leases = 0;
    for (const [, v] of bolt.bucket('lease')) {
      const l = fields(v, 'lease bucket');
      add(leaseKey(int(l, 1).toString()), leaseValue(Number(int(l, 2))));
      leases++;
      yield* ready.splice(0);
    }
    revision = Math.max(revision, scheduled);
    add(...formatRecord());
    add(metaKey('consistentIndex'), pack(o.consistentIndex));
    add(metaKey('currentRev'), pack(Math.max(1, revision)));
    // The auth state as the store keeps it (KvStore.setAuthState: AuthState.snapshot()'s shape).
    add(metaKey('auth'), pack(auth));
    if (scheduled > 0) {
      add(metaKey('compactRev'), pack(scheduled));
      // A compaction etcd had scheduled but not finished is finished by the store when it opens.
      add(metaKey('compactDone'), pack(finished));
    }
    yield* ready.splice(0);
    if (batch.length > 0) yield pack(batch);
    summary.value = {
      revision: Math.max(1, revision),
      compactRevision: scheduled,
      records,
      leases,
      etcdConsistentIndex: metaRev(meta.get('consistent_index')),
      hash: verified ? 'verified' : 'skipped',
      auth: { users: auth.users.length, roles: auth.roles.length, enabled: auth.enabled, revision: auth.revision },
    };
  } finally {
    bolt.close();
  }
}
