// The store as etcd 3.4 keeps it in bbolt, for Maintenance.Snapshot: `etcdctl snapshot save` then gives a
// file that `etcdctl snapshot status` reads and `etcdctl snapshot restore` turns into an etcd data
// directory. Buckets and encodings are etcd's:
//   key      revision (8-byte big-endian main, '_', 8-byte sub; a tombstone adds 't') → mvccpb.KeyValue
//            (a tombstone's holds only the key)
//   lease    8-byte big-endian id → leasepb.Lease {ID, TTL}
//   meta     consistent_index (8 bytes), finishedCompactRev and scheduledCompactRev (revision bytes)
//   alarm    etcdserverpb.AlarmMember → empty
//   auth, authUsers, authRoles   the auth state (users, roles, enabled flag, revision) as etcd keeps it
//            (etcd-auth-records.ts)
//   cluster  clusterVersion
//   members  hex id → JSON {"id", "peerURLs", "isLearner" if so, "name", "clientURLs"} (a restore
//            replaces them with the members it is told about)
//   members_removed: empty
// One LevelDB iterator reads the whole store, so the image is consistent; the file is built in a
// temporary directory (bbolt's meta pages, at the front, are known only at the end) and then streamed.
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unpack } from 'msgpackr';
import { BoltWriter } from './bolt-writer.js';
import { etcdAuthBuckets, type AuthImage } from './etcd-auth-records.js';
import { Writer, encodeKeyValue, intFieldLen, writeInt } from './pb.js';
import { decodeRecord } from './record.js';
import { REV_KEY_LEN, REV_PREFIX, parseRevKey } from './revision.js';
import { LEASE_PREFIX, META_PREFIX, decodeLease } from './backend.js';

/** The meta entries etcd's buckets take something from (others, such as the format marker, stay behind). */
const META_NEEDED = new Set(['consistentIndex', 'compactRev', 'alarms', 'auth']);
/** etcd 3.4 writes this as the cluster version of a 3.4 cluster. */
const CLUSTER_VERSION = '3.4.0';
const ALARM_TYPES: Record<string, number> = { NONE: 0, NOSPACE: 1, CORRUPT: 2 };

type Entry = readonly [Buffer, Buffer];

/** A cluster member as the members bucket records it. */
export interface SnapshotMember {
  /** uint64 as a decimal string. */
  readonly id: string;
  /** Empty until the member has started and published its name (etcdctl shows "unstarted"). */
  readonly name: string;
  readonly peerURLs: readonly string[];
  readonly clientURLs: readonly string[];
  readonly isLearner: boolean;
}

/** etcd's membership JSON: Go's encoding of its Member struct, the id a bare uint64, empty fields left out. */
function memberEntry(m: SnapshotMember): Entry {
  let json = `{"id":${BigInt(m.id).toString()},"peerURLs":${JSON.stringify(m.peerURLs)}`;
  if (m.isLearner) json += ',"isLearner":true';
  if (m.name !== '') json += `,"name":${JSON.stringify(m.name)}`;
  if (m.clientURLs.length > 0) json += `,"clientURLs":${JSON.stringify(m.clientURLs)}`;
  return [Buffer.from(BigInt(m.id).toString(16)), Buffer.from(`${json}}`)];
}

/** etcd's revision bytes: main, '_', sub, each 8 bytes big-endian; 't' after a tombstone's. */
export function etcdRevBytes(main: number, sub: number, tombstone = false): Buffer {
  const b = Buffer.alloc(tombstone ? 18 : 17);
  b.writeBigUInt64BE(BigInt(main), 0);
  b[8] = 0x5f;
  b.writeBigUInt64BE(BigInt(sub), 9);
  if (tombstone) b[17] = 0x74;
  return b;
}

function u64be(n: number | bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt.asUintN(64, BigInt(n)), 0);
  return b;
}

/** A message of int64/uint64 fields only, numbered from 1 (leasepb.Lease, AlarmMember). */
function intMessage(fields: readonly (number | bigint)[]): Buffer {
  let size = 0;
  fields.forEach((v, i) => (size += intFieldLen(i + 1, v)));
  const w = new Writer(size);
  fields.forEach((v, i) => writeInt(w, i + 1, v));
  return w.buf;
}

/** One of our backend's revision records as etcd's key-bucket entry. */
function keyBucketEntry(k: Buffer, v: Buffer): Entry {
  const rev = parseRevKey(k);
  const r = decodeRecord(v);
  if (r.tombstone) {
    const kv = encodeKeyValue({ key: r.key, createRevision: 0, modRevision: 0, version: 0, value: Buffer.alloc(0), lease: '0' });
    return [etcdRevBytes(rev.main, rev.sub, true), kv];
  }
  return [etcdRevBytes(rev.main, rev.sub), encodeKeyValue({ key: r.key, createRevision: r.createRevision, modRevision: rev.main, version: r.version, value: r.value, lease: r.lease })];
}

/** The bbolt image of a store, given one consistent pass over its backend, written to `path`; returns its size. */
export async function writeEtcdSnapshot(path: string, batches: AsyncIterable<readonly Entry[]>, members: readonly SnapshotMember[] = []): Promise<number> {
  const fh = await open(path, 'w+');
  try {
    const bolt = new BoltWriter(fh);
    const leases: { id: bigint; ttl: number }[] = [];
    const meta = new Map<string, unknown>();
    // Leases ('l') and meta ('m:') sort before revisions ('r'): gathered first, written after the key bucket.
    async function* revisions(): AsyncGenerator<Entry> {
      for await (const batch of batches) {
        for (const [k, v] of batch) {
          if (k[0] === REV_PREFIX && k.length === REV_KEY_LEN) yield keyBucketEntry(k, v);
          else if (k[0] === LEASE_PREFIX) {
            const l = decodeLease(k, v);
            leases.push({ id: BigInt(l.id), ttl: l.ttl });
          } else if (k.toString('latin1', 0, META_PREFIX.length) === META_PREFIX) {
            const name = k.toString('latin1', META_PREFIX.length);
            if (META_NEEDED.has(name)) meta.set(name, unpack(v));
          }
        }
      }
    }
    await bolt.bucket('key', revisions());
    leases.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    await bolt.bucket(
      'lease',
      leases.map((l): Entry => [u64be(l.id), intMessage([l.id, l.ttl])]),
    );
    const metaEntries: Entry[] = [[Buffer.from('consistent_index'), u64be(Number(meta.get('consistentIndex') ?? 0))]];
    const compactRev = Number(meta.get('compactRev') ?? 0);
    if (compactRev > 0) {
      metaEntries.push([Buffer.from('finishedCompactRev'), etcdRevBytes(compactRev, 0)]);
      metaEntries.push([Buffer.from('scheduledCompactRev'), etcdRevBytes(compactRev, 0)]);
    }
    await bolt.bucket('meta', metaEntries);
    const alarms = ((meta.get('alarms') ?? []) as { memberId: string; alarm: string }[])
      .map((a) => intMessage([BigInt(a.memberId), ALARM_TYPES[a.alarm] ?? 0]))
      .sort(Buffer.compare);
    await bolt.bucket(
      'alarm',
      alarms.map((a): Entry => [a, Buffer.alloc(0)]),
    );
    const auth = etcdAuthBuckets(meta.get('auth') as AuthImage | undefined);
    await bolt.bucket('auth', auth.auth);
    await bolt.bucket('authRoles', auth.authRoles);
    await bolt.bucket('authUsers', auth.authUsers);
    await bolt.bucket('cluster', [[Buffer.from('clusterVersion'), Buffer.from(CLUSTER_VERSION)]]);
    await bolt.bucket('members', members.map(memberEntry).sort((a, b) => Buffer.compare(a[0], b[0])));
    await bolt.bucket('members_removed', []);
    return await bolt.finish();
  } finally {
    await fh.close();
  }
}

/** Streams the bbolt image in chunks of `chunkBytes`, from a temporary file removed afterwards. */
export async function* etcdSnapshotChunks(batches: AsyncIterable<readonly Entry[]>, members: readonly SnapshotMember[], chunkBytes = 1 << 20): AsyncGenerator<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'setpoint-snapshot-'));
  try {
    const path = join(dir, 'db');
    const size = await writeEtcdSnapshot(path, batches, members);
    const fh = await open(path, 'r');
    try {
      for (let pos = 0; pos < size; pos += chunkBytes) {
        const buf = Buffer.alloc(Math.min(chunkBytes, size - pos));
        const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        yield buf.subarray(0, bytesRead);
      }
    } finally {
      await fh.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
