// `setpoint snapshot restore FILE`: a new member's data directory from an etcd 3.4 snapshot, with
// etcdctl's restore flags, so a cluster moves from etcd to Setpoint by restoring the same file once per
// member (each with its own --name and --initial-advertise-peer-urls, all with the same --initial-cluster
// and --initial-cluster-token) and starting `setpoint store` on each directory. The key-value store keeps
// etcd's keys, values, revisions, leases and compacted revision; the Raft log starts afresh from the
// bootstrap snapshot every founding member shares, with the members the flags name (as etcd's restore
// replaces the members the snapshot held). Built in a temporary directory beside the target and renamed
// into place last, so a restore cut short or refused leaves nothing behind.
import { existsSync, mkdirSync, rmSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { KvStore } from '../../kv/kv-store.js';
import { etcdSnapshotRecords, type ImportSummary } from '../../kv/etcd-snapshot-import.js';
import { DurableRaftStorage } from '../../storage/raft-storage.js';
import { syncDir } from '../../storage/wal.js';
import { initIdentity } from '../member/identity.js';
import { parseInitialCluster } from '../member/membership.js';

export interface RestoreOptions {
  readonly snapshot: string;
  readonly name: string;
  /** `m1=http://127.0.0.1:2380,m2=…` */
  readonly initialCluster: string;
  readonly initialClusterToken: string;
  readonly initialAdvertisePeerUrls: readonly string[];
  readonly dataDir: string;
  readonly skipHashCheck: boolean;
}

export class RestoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreError';
  }
}

export interface RestoreResult extends ImportSummary {
  /** Live keys, as the restored store counts them. */
  readonly liveKeys: number;
  readonly memberId: bigint;
  readonly clusterId: bigint;
}

/** The index of the bootstrap snapshot (identity.ts): the imported store has applied the log up to it. */
const BOOTSTRAP_INDEX = 1;

export async function restoreSnapshot(o: RestoreOptions): Promise<RestoreResult> {
  const target = resolve(o.dataDir);
  if (existsSync(target)) throw new RestoreError(`data-dir "${o.dataDir}" exists`);
  if (!existsSync(o.snapshot)) throw new RestoreError(`open ${o.snapshot}: no such file or directory`);
  let initialCluster: Map<string, string[]>;
  try {
    initialCluster = parseInitialCluster(o.initialCluster);
  } catch (e) {
    throw new RestoreError((e as Error).message);
  }
  const mine = initialCluster.get(o.name);
  if (!mine) throw new RestoreError(`couldn't find local name "${o.name}" in the initial cluster configuration`);
  if (!o.initialAdvertisePeerUrls.every((u) => mine.includes(u))) {
    const adv = o.initialAdvertisePeerUrls.join(',');
    throw new RestoreError(`--initial-cluster has ${o.name}=${mine.join(',')} but missing from --initial-advertise-peer-urls=${adv} (resolved urls: "${adv}" != "${mine.join(',')}")`);
  }
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.restoring-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    const memberDir = join(tmp, 'member');
    mkdirSync(memberDir, { recursive: true });
    const summary: { value?: ImportSummary } = {};
    const records = etcdSnapshotRecords(o.snapshot, { consistentIndex: BOOTSTRAP_INDEX, skipHashCheck: o.skipHashCheck }, summary);
    const kv = await KvStore.restore(join(memberDir, 'kv'), toAsync(records));
    let liveKeys: number;
    try {
      liveKeys = (await kv.range({ key: Buffer.from([0]), rangeEnd: Buffer.from([0]), countOnly: true })).count;
    } finally {
      await kv.close();
    }
    const storage = await DurableRaftStorage.open(join(memberDir, 'raft'));
    let who;
    try {
      who = await initIdentity({ name: o.name, initialCluster, initialClusterState: 'new', initialClusterToken: o.initialClusterToken }, memberDir, storage);
    } finally {
      await storage.close();
    }
    await syncDir(memberDir);
    renameSync(tmp, target);
    await syncDir(dirname(target));
    return { ...(summary.value as ImportSummary), liveKeys, memberId: BigInt(who.memberId), clusterId: BigInt(who.membership.clusterId) };
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

async function* toAsync<T>(it: Iterable<T>): AsyncGenerator<T> {
  yield* it;
}
