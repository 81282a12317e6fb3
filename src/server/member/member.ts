// One store member: builds the core, the store and the transport, wires the Ready loop (ready-loop.ts), the
// applier, the proposals and their waiters, the leases, the membership changes and the snapshot hand-off
// to them, and serves the StoreApi that the gRPC services call.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Message, NodeId, SoftState } from '../../raft/types.js';
import type { DeleteRangeRequest, DeleteRangeResponse, PutRequest, PutResponse, RangeRequest, RangeResponse, TxnRequest, TxnResponse } from '../../kv/types.js';
import type { AlarmMember, AlarmType, Header, MemberInfo, ReadOptions, StatusInfo, StoreApi, WriteOptions } from './store-api.js';
import type { InboundHandlers, OutboundHooks } from './transport-api.js';
import type { WatchResponseSender } from '../../watch/watch-stream.js';
import type { MemberConfig } from './member-config.js';
import { RawNode } from '../../raft/raw-node.js';
import { SeededRng } from '../../raft/rng.js';
import { RaftError } from '../../raft/errors.js';
import { NONE } from '../../raft/types.js';
import { DurableRaftStorage } from '../../storage/raft-storage.js';
import { KvStore } from '../../kv/kv-store.js';
import { etcdError } from '../../kv/errors.js';
import { WatchableStore } from '../../watch/watchable-store.js';
import { WatchStream } from '../../watch/watch-stream.js';
import { ReadBarrier } from './read-barrier.js';
import { MemberCore } from './member-core.js';
import { ReadyLoop } from './ready-loop.js';
import { Proposals } from './proposals.js';
import { Applier } from './applier.js';
import { Leases } from './leases.js';
import { MembershipChanges } from './membership-changes.js';
import { SnapshotHandoff } from './snapshot-handoff.js';
import { initIdentity } from './identity.js';
import { KvRequests } from './kv-requests.js';
import { LeaderHandover } from './leader-handover.js';
import { Maintenance } from './maintenance.js';
import { AuthRequests } from './auth-requests.js';
import { DEFAULT_TOKEN_TTL_S } from '../auth/simple-tokens.js';
import { DEFAULT_BCRYPT_COST } from '../auth/bcrypt.js';

export class Member implements StoreApi {
  readonly log: Logger;
  private readonly c: MemberCore;
  private readonly proposals: Proposals;
  private readonly leases: Leases;
  private readonly changes: MembershipChanges;
  private readonly kvReqs: KvRequests;
  private readonly handover: LeaderHandover;
  private readonly maint: Maintenance;
  /** The auth store: users, roles, tokens and the checks (auth-requests.ts). */
  readonly auth: AuthRequests;
  private watchable!: WatchableStore;
  private reads!: ReadBarrier;
  private loop!: ReadyLoop;
  private snapshots!: SnapshotHandoff;

  private ticker: NodeJS.Timeout | undefined;
  private leaseTimer: NodeJS.Timeout | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  /** Resolves once the member has stopped, whatever stopped it. */
  readonly done: Promise<void>;
  private resolveDone: () => void = () => undefined;
  /**
   * Set once this member learns it was removed (it applied its own removal, or its peers refuse it as
   * removed): it stops, as etcd does, rather than serve a cluster it left.
   */
  removedFromCluster = false;

  constructor(readonly cfg: MemberConfig) {
    this.c = new MemberCore(cfg);
    this.log = this.c.log;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.proposals = new Proposals(this.c);
    this.auth = new AuthRequests(this.c, this.proposals, () => this.kvReqs.linearize(false), cfg.auth ?? { tokenTtlMs: DEFAULT_TOKEN_TTL_S * 1000, bcryptCost: DEFAULT_BCRYPT_COST });
    this.kvReqs = new KvRequests(this.c, this.proposals, () => this.reads, () => void this.alarm('ACTIVATE', String(this.c.memberId), 'NOSPACE').catch(() => undefined), () => this.auth);
    this.leases = new Leases(this.c, this.proposals, () => this.kvReqs.linearize(false), (cost) => this.kvReqs.checkQuota(cost));
    this.handover = new LeaderHandover(this.c);
    this.maint = new Maintenance(this.c, this.proposals);
    this.changes = new MembershipChanges(this.c, this.proposals);
  }

  get memberId(): NodeId {
    return this.c.memberId;
  }

  // ---- lifecycle ----

  async start(): Promise<void> {
    const c = this.c;
    await mkdir(c.memberDir, { recursive: true });
    c.storage = await DurableRaftStorage.open(join(c.memberDir, 'raft'));
    // Quota is enforced before proposing (nondeterministic sizes must not decide what applies); the
    // applier only honours the replicated NOSPACE alarm.
    c.kv = await KvStore.open(join(c.memberDir, 'kv'), { quotaBackendBytes: Number.POSITIVE_INFINITY, minLeaseTtl: Math.ceil((1.5 * this.cfg.electionMs) / 1000) });
    this.watchable = new WatchableStore(c.kv, { logger: this.cfg.logger });
    this.auth.load(c.kv.authState);
    c.kv.onRestore(() => this.auth.load(c.kv.authState));
    const who = await initIdentity(this.cfg, c.memberDir, c.storage);
    c.memberId = who.memberId;
    c.membership = who.membership;

    const electionTick = Math.max(2, Math.round(this.cfg.electionMs / this.cfg.heartbeatMs));
    const snap = c.storage.snapshot();
    // Restart from the snapshot: entries after it are replayed, and the key-value store skips those it
    // already holds (its consistent index), so conf changes and members are rebuilt exactly.
    c.node = new RawNode({
      id: c.memberId,
      electionTick,
      heartbeatTick: 1,
      storage: c.storage,
      rng: new SeededRng(randomBytes(4).readUInt32BE(0)),
      applied: snap.metadata.index,
      checkQuorum: true,
      preVote: true,
      maxSizePerMsg: 1024 * 1024,
      maxInflightMsgs: 512,
    });
    this.snapshots = new SnapshotHandoff(c);
    this.reads = new ReadBarrier({
      readIndex: (ctx) => {
        c.node.readIndex(ctx);
        this.proposals.sendForwards();
        c.kick();
      },
      ctxPrefix: c.memberId.toString(16),
      applied: () => c.node.applied(),
      // etcd resends an unanswered ReadIndex every 500 ms whatever the election timeout: a request or
      // answer lost on a reconnecting peer stream must not hold reads for a long election timeout.
      retryMs: Math.min(500, this.cfg.electionMs),
      timeoutMs: c.requestTimeoutMs,
      clock: c.clock,
    });
    this.loop = this.readyLoop();
    c.kick = () => this.loop.kick();

    c.transport = await this.cfg.transport({ memberId: c.memberId, clusterId: c.membership.clusterId }, this.inbound(), this.outbound());
    for (const m of c.membership.members.values()) if (m.id !== c.memberId) c.transport.addPeer(m.id, m.peerURLs);

    // A tick runs after the poll phase, not in the timers phase: after the event loop was held up (a long
    // apply, e.g. a delete of 150,000 keys), the peer messages that arrived meanwhile are stepped first, so
    // the leader's check-quorum does not count its own stall against its followers, and a follower does not
    // campaign past a heartbeat that is waiting in its socket.
    this.ticker = setInterval(() => setImmediate(() => {
      if (c.stopped) return;
      c.node.tick();
      c.kick();
    }), this.cfg.heartbeatMs);
    this.leaseTimer = setInterval(() => this.leases.expire(), 500);
    this.flushTimer = setInterval(() => void c.kv.flush().catch((e: unknown) => this.fatal(e)), 100);
    this.log.info({ memberId: c.memberId.toString(16), clusterId: c.membership.clusterId.toString(16), members: c.membership.members.size }, 'member started');
    c.kick();
  }

  /** The Ready loop over this member's disk, peers, applier and reads. */
  private readyLoop(): ReadyLoop {
    const c = this.c;
    const applier = new Applier(c, this.proposals, {
      leaveCluster: (why) => this.leaveCluster(why),
      snapshotSoon: () => this.snapshots.soon(),
      leaseRevoked: (lease) => this.leases.onRevoked(lease),
      auth: this.auth,
    });
    const delay = this.cfg.leaderApplyDelayMs;
    return new ReadyLoop(c.node, {
      onSoftState: (ss) => this.onSoftState(ss),
      isLeader: () => c.isLeader(),
      save: async (rd) => {
        const t0 = performance.now();
        await c.storage.save(rd);
        if (rd.mustSync) this.cfg.metrics?.walFsyncSeconds.observe((performance.now() - t0) / 1000);
      },
      send: (messages) => c.transport.send(messages),
      installSnapshot: (s) => this.snapshots.install(s),
      apply: (e) => applier.applyEntry(e),
      onReadState: (rs) => this.reads.onReadState(rs),
      afterAdvance: async () => {
        this.reads.onApplied();
        this.proposals.onApplied();
        this.cfg.metrics?.proposalsCommitted.set(c.node.committed());
        this.cfg.metrics?.proposalsApplied.set(c.node.applied());
        this.cfg.metrics?.dbSize.set(c.kv.size());
        await this.snapshots.maybeTake();
      },
      nextTurn: () => nextTurn(),
      ...(delay ? { beforeLeaderApply: () => sleep(delay) } : {}),
      stopped: () => c.stopped,
      fatal: (e) => this.fatal(e),
    });
  }

  /** Stops the member. A leader first hands leadership to a caught-up voter, so no write is lost. */
  async stop(): Promise<void> {
    const c = this.c;
    if (c.stopped) return;
    if (c.isLeader() && c.membership.voters().length > 1) await this.handover.beforeStop().catch(() => undefined);
    c.stopped = true;
    clearInterval(this.ticker);
    clearInterval(this.leaseTimer);
    clearInterval(this.flushTimer);
    this.reads.close(etcdError('STOPPED'));
    this.proposals.close(etcdError('STOPPED'));
    this.watchable.close();
    await c.transport.close();
    await this.loop.idle();
    await c.kv.close();
    await c.storage.close();
    this.log.info('member stopped');
    this.resolveDone();
  }

  private fatal(e: unknown): void {
    this.log.fatal({ err: e }, 'member cannot continue');
    void this.stop();
  }

  /** etcd stops a removed member: its requests could only time out, since nobody commits for it. */
  private leaveCluster(why: string): void {
    if (this.removedFromCluster) return;
    this.removedFromCluster = true;
    this.log.warn(`${why}: stopping`);
    setImmediate(() => void this.stop());
  }

  private onSoftState(ss: SoftState): void {
    const c = this.c;
    const wasLeader = c.isLeader();
    const leaderChanged = ss.lead !== c.softState.lead;
    c.softState = ss;
    if (leaderChanged) {
      this.log.info({ leader: ss.lead.toString(16), term: c.node.term() }, ss.lead === NONE ? 'lost leader' : 'leader changed');
      this.cfg.metrics?.hasLeader.set(ss.lead === NONE ? 0 : 1);
      if (ss.lead !== NONE) this.cfg.metrics?.leaderChanges.inc();
      this.reads.onLeaderChange();
      if (ss.lead !== NONE) this.proposals.onLeaderFound();
    }
    this.leases.onRoleChange(wasLeader, c.isLeader());
    if (ss.lead !== NONE) this.changes.publishOnce();
  }

  // ---- StoreApi: KV ----

  /** The last header made, with the ids it was made for: watch streams ask for one per response. */
  private lastHeader: { readonly header: Header; readonly cluster: NodeId; readonly member: NodeId } | undefined;

  header(revision?: number): Header {
    const c = this.c;
    const rev = revision ?? c.kv.currentRev;
    const term = c.node.term();
    const cluster = c.membership.clusterId;
    const last = this.lastHeader;
    if (last && last.header.revision === rev && last.header.raftTerm === term && last.cluster === cluster && last.member === c.memberId) return last.header;
    const header = { clusterId: String(cluster), memberId: String(c.memberId), revision: rev, raftTerm: term };
    this.lastHeader = { header, cluster, member: c.memberId };
    return header;
  }

  range(req: RangeRequest, opts?: ReadOptions): Promise<RangeResponse> {
    return this.kvReqs.range(req, opts?.auth);
  }

  put(req: PutRequest, opts?: WriteOptions): Promise<PutResponse> {
    return this.kvReqs.put(req, opts);
  }

  deleteRange(req: DeleteRangeRequest, opts?: WriteOptions): Promise<DeleteRangeResponse> {
    return this.kvReqs.deleteRange(req, opts);
  }

  txn(req: TxnRequest, opts?: WriteOptions): Promise<TxnResponse> {
    return this.kvReqs.txn(req, opts);
  }

  compact(revision: number, physical: boolean): Promise<{ revision: number }> {
    return this.kvReqs.compact(revision, physical);
  }

  openWatchStream(send: WatchResponseSender): WatchStream {
    return new WatchStream(this.watchable, send, { logger: this.cfg.logger });
  }

  // ---- StoreApi: leases and cluster (leases.ts, membership-changes.ts) ----

  leaseGrant(id: string, ttl: number): Promise<{ id: string; ttl: number }> {
    return this.leases.grant(id, ttl);
  }

  leaseRevoke(id: string, opts?: ReadOptions): Promise<{ revision: number }> {
    return this.leases.revoke(id, (r) => this.auth.asCaller(r, opts?.auth));
  }

  leaseKeepAlive(id: string): Promise<{ id: string; ttl: number }> {
    return this.leases.keepAlive(id);
  }

  leaseTimeToLive(id: string, keys: boolean): Promise<{ id: string; ttl: number; grantedTtl: number; keys: Uint8Array[] }> {
    return this.leases.timeToLive(id, keys);
  }

  leaseLeases(): Promise<{ ids: string[] }> {
    return this.leases.list();
  }

  memberList(): Promise<{ members: MemberInfo[] }> {
    return this.changes.list();
  }

  memberAdd(peerURLs: readonly string[], isLearner: boolean): Promise<{ member: MemberInfo; members: MemberInfo[] }> {
    return this.changes.add(peerURLs, isLearner);
  }

  memberRemove(id: string): Promise<{ members: MemberInfo[] }> {
    return this.changes.remove(id);
  }

  memberPromote(id: string): Promise<{ members: MemberInfo[] }> {
    return this.changes.promote(id);
  }

  memberUpdate(id: string, peerURLs: readonly string[]): Promise<{ members: MemberInfo[] }> {
    return this.changes.update(id, peerURLs);
  }

  // ---- StoreApi: maintenance (maintenance.ts) ----

  status(): Promise<StatusInfo> {
    return this.maint.status();
  }

  hash(): Promise<{ hash: number }> {
    return this.maint.hash();
  }

  hashKV(revision: number): Promise<{ hash: number; compactRevision: number }> {
    return this.maint.hashKV(revision);
  }

  alarm(action: 'GET' | 'ACTIVATE' | 'DEACTIVATE', memberId: string, alarm: AlarmType): Promise<{ alarms: AlarmMember[] }> {
    return this.maint.alarm(action, memberId, alarm);
  }

  defragment(): Promise<void> {
    return this.c.kv.defragment();
  }

  snapshot(): AsyncIterable<Uint8Array> {
    return this.c.kv.etcdSnapshot(this.c.membership.list());
  }

  health(): Promise<{ health: boolean; reason: string }> {
    return this.maint.health();
  }

  /** Hands leadership to the member; `giveUp` (asked every heartbeat) ends the wait early, without error. */
  moveLeader(targetId: string, timeoutMs?: number, giveUp?: () => boolean): Promise<void> {
    return this.handover.moveLeader(targetId, timeoutMs, giveUp);
  }

  /** From the membership, as etcd's IsLearner: right from the start for a member that joined as one. */
  isLearner(): boolean {
    return this.c.membership.members.get(this.c.memberId)?.isLearner ?? false;
  }

  // ---- transport wiring ----

  private inbound(): InboundHandlers {
    const c = this.c;
    return {
      onMessage: (received: Message) => {
        if (c.stopped) return;
        const m = received.type === 'prop' && c.isLeader() ? this.changes.withoutEarlyPromotions(received) : received;
        if (!m) return;
        try {
          c.node.step(m);
        } catch (e) {
          if (!(e instanceof RaftError)) throw e;
          this.log.debug({ err: e, type: m.type, from: m.from.toString(16) }, 'dropped peer message');
          return;
        }
        c.kick();
      },
      receiveSnapshot: (m: Message, kv: AsyncIterable<Uint8Array>) => this.snapshots.receive(m, kv),
      clusterInfo: () => c.membership.encode(),
      leaseKeepAlive: async (id: string) => {
        if (!c.isLeader()) throw etcdError('NOT_LEADER');
        return { ttl: await this.leases.renewAsLeader(id) };
      },
      leaseTimeToLive: async (id: string, keys: boolean) => {
        if (!c.isLeader()) throw etcdError('NOT_LEADER');
        await this.proposals.waitAppliedCommitted();
        const t = this.leases.localTimeToLive(id, keys);
        return { ttl: t.ttl, grantedTtl: t.grantedTtl, keys: t.keys };
      },
      memberPromote: async (id: NodeId) => {
        if (!c.isLeader()) throw etcdError('NOT_LEADER');
        return this.changes.promoteAsLeader(id);
      },
    };
  }

  private outbound(): OutboundHooks {
    const c = this.c;
    return {
      reportUnreachable: (id) => {
        c.node.reportUnreachable(id);
        c.kick();
      },
      connectionLost: (id) => this.handover.onConnectionLost(id),
      reportSnapshot: (id, ok) => {
        c.node.reportSnapshot(id, ok);
        c.kick();
      },
      kvSnapshot: () => c.kv.snapshot(),
      // Its own removal may never reach a removed follower: the peers' refusal is how it learns.
      removedFromCluster: () => this.leaveCluster('a peer refused this member as removed from the cluster'),
    };
  }

  /** For tests and the CLI: the member's view right now. */
  info(): { memberId: string; leader: string; term: number; applied: number; revision: number } {
    const c = this.c;
    return { memberId: String(c.memberId), leader: String(c.softState.lead), term: c.node.term(), applied: c.node.applied(), revision: c.kv.currentRev };
  }
}

// ---- helpers ----
