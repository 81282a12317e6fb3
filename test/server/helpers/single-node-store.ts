// A StoreApi for testing the gRPC layer: one real KvStore and WatchableStore on a temp dir, no Raft. Writes
// apply directly; the "leader" is this node unless a test takes it away (to see leader-required calls
// refused). It is a fixture for the edge, not a stand-in for the member (src/server/member/member.ts).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvStore } from '../../../src/kv/kv-store.js';
import { etcdError } from '../../../src/kv/errors.js';
import { fromKey } from '../../../src/kv/key-range.js';
import type { DeleteRangeRequest, PutRequest, RangeRequest, TxnRequest } from '../../../src/kv/types.js';
import { WatchableStore } from '../../../src/watch/watchable-store.js';
import { WatchStream } from '../../../src/watch/watch-stream.js';
import type { WatchStreamOptions, WatchResponseSender } from '../../../src/watch/watch-stream.js';
import type { AlarmMember, AlarmType, Header, MemberInfo, StatusInfo, StoreApi, WriteOptions } from '../../../src/server/member/store-api.js';
import { checkWrite } from '../../../src/server/member/kv-requests.js';

export interface SingleNodeOptions {
  readonly watch?: WatchStreamOptions;
  /** How often expired leases are revoked (ms). */
  readonly leaseCheckMs?: number;
  readonly clientURLs?: readonly string[];
}

/** A random positive int64 as etcd's lease ids are. */
function randomLeaseId(): string {
  const id = randomBytes(8).readBigUInt64BE() >> 1n;
  return id === 0n ? '1' : id.toString();
}

export class SingleNodeStore implements StoreApi {
  readonly clusterId = '14841639068965178418';
  /** Above 2^53 on purpose: ids must survive the wire exactly. */
  readonly memberId = '10276657743932975437';
  readonly raftTerm = 2;
  /** The leader this member believes in; '0' = none (tests set it). */
  leader: string;
  /** Whether Status reports this member as a learner (tests set it). */
  learner = false;
  clientURLs: readonly string[];
  private alarms: AlarmMember[] = [];
  private readonly timer: NodeJS.Timeout;

  private constructor(
    readonly kv: KvStore,
    readonly watchable: WatchableStore,
    private readonly dir: string,
    private readonly opts: SingleNodeOptions,
  ) {
    this.leader = this.memberId;
    this.clientURLs = opts.clientURLs ?? [];
    kv.leasePromote(0);
    this.timer = setInterval(() => {
      for (const id of kv.expiredLeases()) {
        try {
          kv.leaseRevoke(id);
        } catch {
          // revoked meanwhile
        }
      }
    }, opts.leaseCheckMs ?? 200);
    this.timer.unref();
  }

  static async open(opts: SingleNodeOptions = {}): Promise<SingleNodeStore> {
    const dir = await mkdtemp(join(tmpdir(), 'setpoint-grpc-'));
    const kv = await KvStore.open(dir);
    return new SingleNodeStore(kv, new WatchableStore(kv), dir, opts);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.watchable.close();
    await this.kv.close().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  header(revision?: number): Header {
    return { clusterId: this.clusterId, memberId: this.memberId, revision: revision ?? this.kv.currentRev, raftTerm: this.raftTerm };
  }

  range(req: RangeRequest) {
    return this.kv.range(req);
  }

  put(req: PutRequest, opts?: WriteOptions) {
    checkWrite('put', req, opts);
    return this.kv.put(req);
  }

  deleteRange(req: DeleteRangeRequest, opts?: WriteOptions) {
    checkWrite('deleteRange', req, opts);
    return this.kv.deleteRange(req);
  }

  txn(req: TxnRequest, opts?: WriteOptions) {
    checkWrite('txn', req, opts);
    return this.kv.txn(req);
  }

  async compact(revision: number, physical: boolean): Promise<{ revision: number }> {
    const { done } = this.kv.compact(revision);
    if (physical) await done;
    return { revision: this.kv.currentRev };
  }

  openWatchStream(send: WatchResponseSender): WatchStream {
    return new WatchStream(this.watchable, send, this.opts.watch ?? {});
  }

  async leaseGrant(id: string, ttl: number): Promise<{ id: string; ttl: number }> {
    return this.kv.leaseGrant(id === '0' ? randomLeaseId() : id, ttl);
  }

  async leaseRevoke(id: string): Promise<{ revision: number }> {
    return { revision: this.kv.leaseRevoke(id) };
  }

  async leaseKeepAlive(id: string): Promise<{ id: string; ttl: number }> {
    return { id, ttl: this.kv.leaseRenew(id) };
  }

  async leaseTimeToLive(id: string, keys: boolean) {
    const t = this.kv.leaseTimeToLive(id, keys);
    return { id, ttl: t.ttl, grantedTtl: t.grantedTtl, keys: t.keys.map(fromKey) };
  }

  async leaseLeases(): Promise<{ ids: string[] }> {
    return { ids: this.kv.leaseList() };
  }

  private self(): MemberInfo {
    return { id: this.memberId, name: 'fixture', peerURLs: ['http://127.0.0.1:2380'], clientURLs: [...this.clientURLs], isLearner: false };
  }

  async memberList(): Promise<{ members: MemberInfo[] }> {
    return { members: [this.self()] };
  }

  async memberAdd(): Promise<{ member: MemberInfo; members: MemberInfo[] }> {
    throw etcdError('MEMBER_NOT_ENOUGH_STARTED');
  }

  async memberRemove(id: string): Promise<{ members: MemberInfo[] }> {
    if (id !== this.memberId) throw etcdError('MEMBER_NOT_FOUND');
    throw etcdError('MEMBER_NOT_ENOUGH_STARTED');
  }

  async memberUpdate(id: string): Promise<{ members: MemberInfo[] }> {
    if (id !== this.memberId) throw etcdError('MEMBER_NOT_FOUND');
    return { members: [this.self()] };
  }

  async memberPromote(id: string): Promise<{ members: MemberInfo[] }> {
    if (id !== this.memberId) throw etcdError('MEMBER_NOT_FOUND');
    throw etcdError('MEMBER_NOT_LEARNER');
  }

  async status(): Promise<StatusInfo> {
    return {
      version: '3.4.23',
      dbSize: this.kv.size(),
      dbSizeInUse: this.kv.size(),
      leader: this.leader,
      raftIndex: this.kv.currentRev,
      raftTerm: this.raftTerm,
      raftAppliedIndex: this.kv.currentRev,
      errors: this.leader === '0' ? ['etcdserver: no leader'] : [],
      isLearner: this.learner,
    };
  }

  async hash(): Promise<{ hash: number }> {
    return { hash: (await this.kv.hashKV(0)).hash };
  }

  async hashKV(revision: number): Promise<{ hash: number; compactRevision: number }> {
    const r = await this.kv.hashKV(revision);
    return { hash: r.hash, compactRevision: r.compactRevision };
  }

  async alarm(action: 'GET' | 'ACTIVATE' | 'DEACTIVATE', memberId: string, alarm: AlarmType): Promise<{ alarms: AlarmMember[] }> {
    if (action === 'ACTIVATE' && alarm !== 'NONE') {
      this.alarms.push({ memberId, alarm });
      return { alarms: [{ memberId, alarm }] };
    }
    if (action === 'DEACTIVATE') {
      const gone = this.alarms.filter((a) => a.memberId === memberId && a.alarm === alarm);
      this.alarms = this.alarms.filter((a) => !gone.includes(a));
      return { alarms: gone };
    }
    return { alarms: alarm === 'NONE' ? [...this.alarms] : this.alarms.filter((a) => a.alarm === alarm) };
  }

  async defragment(): Promise<void> {}

  snapshot(): AsyncIterable<Uint8Array> {
    const kv = this.kv;
    const members = async (): Promise<MemberInfo[]> => (await this.memberList()).members;
    return (async function* () {
      yield* kv.etcdSnapshot(await members());
    })();
  }

  async moveLeader(targetId: string): Promise<void> {
    if (targetId !== this.memberId) throw etcdError('BAD_LEADER_TRANSFEREE');
  }

  async health(): Promise<{ health: boolean; reason: string }> {
    if (this.leader === '0') return { health: false, reason: 'RAFT NO LEADER' };
    if (this.alarms.length > 0) return { health: false, reason: `ALARM ${this.alarms.map((a) => a.alarm).join(',')}` };
    return { health: true, reason: '' };
  }
}
