// One store member: drives the Raft core (tick → Ready → persist → send → apply → advance), turns client
// requests into log entries and waits for them to apply, serves linearizable reads through ReadIndex, runs
// lease expiry on the leader, and keeps the membership. The gRPC services call it through StoreApi.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Entry, Message, NodeId, Ready, Snapshot, SoftState } from '../../raft/types.js';
import type { DeleteRangeRequest, DeleteRangeResponse, PutRequest, PutResponse, RangeRequest, RangeResponse, TxnRequest, TxnResponse } from '../../kv/types.js';
import type { AlarmMember, AlarmType, Header, MemberInfo, StatusInfo, StoreApi } from './store-api.js';
import type { InboundHandlers, OutboundHooks, PeerTransport } from './transport-api.js';
import type { InternalRequest } from './requests.js';
import type { WatchResponseSender } from '../../watch/watch-stream.js';
import { RawNode } from '../../raft/raw-node.js';
import { SeededRng } from '../../raft/rng.js';
import { RaftError } from '../../raft/errors.js';
import { NONE, decodeConfChange } from '../../raft/types.js';
import { DurableRaftStorage } from '../../storage/raft-storage.js';
import { KvStore } from '../../kv/kv-store.js';
import { EtcdError, etcdError } from '../../kv/errors.js';
import { checkPut, checkRange, checkTxn, putCost } from '../../kv/txn-check.js';
import { WatchableStore } from '../../watch/watchable-store.js';
import { WatchStream } from '../../watch/watch-stream.js';
import { Membership, decodeIdentity, encodeIdentity, memberIdFor, parseMemberId, parsePeerURLs, toInfo } from './membership.js';
import type { ClusterMember } from './membership.js';
import { decodeConfChangeContext, decodeRequest, encodeConfChangeContext, encodeRequest } from './requests.js';
import type { MemberIdentity } from './membership.js';
import { ReadBarrier } from './read-barrier.js';
import { checkAdd, checkPromote, checkRemove } from './reconfig-check.js';
import type { ReconfigRefusal, ReconfigView } from './reconfig-check.js';
import type { MemberMetrics } from './member-metrics.js';

export const SERVER_VERSION = '3.4.23';

export interface MemberConfig {
  readonly name: string;
  readonly dataDir: string;
  /** This member's advertised peer and client URLs. */
  readonly peerURLs: readonly string[];
  readonly clientURLs: readonly string[];
  /** --initial-cluster parsed (name → peer URLs); --initial-cluster-state; --initial-cluster-token. */
  readonly initialCluster: ReadonlyMap<string, readonly string[]>;
  readonly initialClusterState: 'new' | 'existing';
  readonly initialClusterToken: string;
  readonly heartbeatMs: number;
  readonly electionMs: number;
  readonly snapshotCount: number;
  /** Entries kept behind a snapshot so a briefly lagging follower catches up from the log (etcd: 5000). */
  readonly snapshotCatchUpEntries: number;
  readonly quotaBackendBytes: number;
  /** etcd's --strict-reconfig-check (default on): refuse membership changes that could cost the quorum. */
  readonly strictReconfigCheck?: boolean;
  readonly logger: Logger;
  readonly metrics?: MemberMetrics;
  /** TEST ONLY: serve linearizable reads locally, without ReadIndex (jepsen-lite proves it catches this). */
  readonly unsafeLocalReads?: boolean;
  /** TEST ONLY: as leader, wait this long before applying committed entries (the Ready loop waits too). */
  readonly leaderApplyDelayMs?: number;
  /** Builds the peer transport once the member knows its id and cluster id. */
  readonly transport: (ids: { memberId: NodeId; clusterId: NodeId }, handlers: InboundHandlers, hooks: OutboundHooks) => Promise<PeerTransport>;
  /** For a member joining an existing cluster: asks the peers listed in --initial-cluster who is who. */
  readonly fetchMembership?: (peerURLs: readonly string[]) => Promise<Uint8Array>;
}

interface Waiter {
  resolve(v: unknown): void;
  reject(e: unknown): void;
  /** performance.now() after which the request fails with a timeout. */
  readonly deadline: number;
  /** What was proposed ('put', 'txn', 'confChange', ...), for the slow-request warning. */
  readonly kind: string;
}

/** A proposal applied later than this after it was made is logged (etcd warns of applies over 100 ms). */
const SLOW_REQUEST_MS = 100;
/** Slow-request warnings: at most one line this often, counting the slow requests since the last one. */
const SLOW_LOG_EVERY_MS = 1000;

/** The apply loop may fall this far behind commit before new requests are refused (etcd: 5000). */
const MAX_GAP_BETWEEN_APPLY_AND_COMMIT = 5000;
const MAX_LEARNERS = 1;

/** A caller of waitAppliedCommitted(): released once the applied index reaches `index`. */
interface AppliedWaiter {
  readonly index: number;
  resolve(): void;
  reject(e: unknown): void;
}

export class Member implements StoreApi {
  readonly log: Logger;
  private node!: RawNode;
  private storage!: DurableRaftStorage;
  private kv!: KvStore;
  private watchable!: WatchableStore;
  private transport!: PeerTransport;
  private membership!: Membership;
  private reads!: ReadBarrier;
  memberId: NodeId = NONE;

  private ticker: NodeJS.Timeout | undefined;
  private leaseTimer: NodeJS.Timeout | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private processing = false;
  private again = false;
  private stopped = false;
  /** Proposals waiting to be applied, oldest first (all have the same timeout, so deadlines ascend). */
  private readonly waiters = new Map<string, Waiter>();
  /** One timer for all waiters, set for the oldest one's deadline (see sweepWaiters). */
  private waiterTimer: NodeJS.Timeout | undefined;
  /** Callers of waitAppliedCommitted(), oldest first. */
  private appliedWaiters: AppliedWaiter[] = [];
  private reqSeq = 0;
  /** Proposals gathered in this turn of the event loop, proposed together (one append, one message). */
  private batch: Uint8Array[] = [];
  private batchScheduled = false;
  private lastSnapshotIndex = 0;
  private softState: SoftState = { lead: NONE, raftState: 'follower' };
  private readonly revoking = new Set<string>();
  private published = false;
  /** A snapshot received from the leader, staged on disk until its Ready is applied. */
  private stagedSnapshot: string | undefined;
  private readonly requestTimeoutMs: number;
  /** Resolves once the member has stopped, whatever stopped it. */
  readonly done: Promise<void>;
  private resolveDone: () => void = () => undefined;
  /**
   * Set once this member learns it was removed (it applied its own removal, or its peers refuse it as
   * removed): it stops, as etcd does, rather than serve a cluster it left.
   */
  removedFromCluster = false;

  constructor(readonly cfg: MemberConfig) {
    this.log = cfg.logger.child({ component: 'member', name: cfg.name });
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    // etcd's request timeout: 5 s plus twice the election timeout.
    this.requestTimeoutMs = 5000 + 2 * cfg.electionMs;
  }

  private get memberDir(): string {
    return join(this.cfg.dataDir, 'member');
  }

  // ---- lifecycle ----

  async start(): Promise<void> {
    await mkdir(this.memberDir, { recursive: true });
    this.storage = await DurableRaftStorage.open(join(this.memberDir, 'raft'));
    // Quota is enforced before proposing (nondeterministic sizes must not decide what applies); the
    // applier only honours the replicated NOSPACE alarm.
    this.kv = await KvStore.open(join(this.memberDir, 'kv'), { quotaBackendBytes: Number.POSITIVE_INFINITY, minLeaseTtl: Math.ceil((1.5 * this.cfg.electionMs) / 1000) });
    this.watchable = new WatchableStore(this.kv, { logger: this.cfg.logger });
    await this.initIdentity();

    const electionTick = Math.max(2, Math.round(this.cfg.electionMs / this.cfg.heartbeatMs));
    const snap = this.storage.snapshot();
    this.lastSnapshotIndex = snap.metadata.index;
    // Restart from the snapshot: entries after it are replayed, and the key-value store skips those it
    // already holds (its consistent index), so conf changes and members are rebuilt exactly.
    this.node = new RawNode({
      id: this.memberId,
      electionTick,
      heartbeatTick: 1,
      storage: this.storage,
      rng: new SeededRng(randomBytes(4).readUInt32BE(0)),
      applied: snap.metadata.index,
      checkQuorum: true,
      preVote: true,
      maxSizePerMsg: 1024 * 1024,
      maxInflightMsgs: 512,
    });
    this.reads = new ReadBarrier({
      readIndex: (ctx) => {
        this.node.readIndex(ctx);
        this.sendForwards();
        this.kick();
      },
      ctxPrefix: this.memberId.toString(16),
      applied: () => this.node.applied(),
      // etcd resends an unanswered ReadIndex every 500 ms whatever the election timeout: a request or
      // answer lost on a reconnecting peer stream must not hold reads for a long election timeout.
      retryMs: Math.min(500, this.cfg.electionMs),
      timeoutMs: this.requestTimeoutMs,
    });

    this.transport = await this.cfg.transport({ memberId: this.memberId, clusterId: this.membership.clusterId }, this.inbound(), this.outbound());
    for (const m of this.membership.members.values()) if (m.id !== this.memberId) this.transport.addPeer(m.id, m.peerURLs);

    // A tick runs after the poll phase, not in the timers phase: after the event loop was held up (a long
    // apply, e.g. a delete of 150,000 keys), the peer messages that arrived meanwhile are stepped first, so
    // the leader's check-quorum does not count its own stall against its followers, and a follower does not
    // campaign past a heartbeat that is waiting in its socket.
    this.ticker = setInterval(() => setImmediate(() => {
      if (!this.stopped) this.tick();
    }), this.cfg.heartbeatMs);
    this.leaseTimer = setInterval(() => this.expireLeases(), 500);
    this.flushTimer = setInterval(() => void this.kv.flush().catch((e: unknown) => this.fatal(e)), 100);
    this.log.info({ memberId: this.memberId.toString(16), clusterId: this.membership.clusterId.toString(16), members: this.membership.members.size }, 'member started');
    this.kick();
  }

  /** Who we are: from disk on restart, from --initial-cluster for a new cluster, or from the peers when joining. */
  private async initIdentity(): Promise<void> {
    const idFile = join(this.memberDir, 'identity.json');
    let saved: MemberIdentity | undefined;
    try {
      saved = decodeIdentity(await readFile(idFile, 'utf8'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${idFile}: unreadable member identity (${(e as Error).message})`, { cause: e });
    }
    const snap = this.storage.snapshot();
    if (saved) {
      this.memberId = saved.memberId;
      this.membership = snap.metadata.index > 0 && snap.data.length > 0 ? Membership.decode(snap.data) : new Membership(saved.clusterId);
      return;
    }
    const self = this.cfg.initialCluster.get(this.cfg.name);
    if (!self) throw new Error(`--initial-cluster has no entry for this member's name "${this.cfg.name}"`);
    if (this.cfg.initialClusterState === 'new') {
      this.membership = Membership.fromInitialCluster(new Map([...this.cfg.initialCluster].map(([n, u]) => [n, [...u]])), this.cfg.initialClusterToken);
      this.memberId = memberIdFor(self, this.cfg.initialClusterToken);
      const ids = this.membership.voters();
      // Every founding member writes the same bootstrap snapshot: index 1, term 1, all of them voters.
      await this.storage.save({
        snapshot: { metadata: { index: 1, term: 1, confState: { voters: ids, learners: [] } }, data: this.membership.encode() },
        entries: [],
        hardState: { term: 1, vote: NONE, commit: 1 },
        mustSync: true,
      });
    } else {
      if (!this.cfg.fetchMembership) throw new Error('joining an existing cluster needs a way to reach its members');
      const others = [...this.cfg.initialCluster].filter(([n]) => n !== this.cfg.name).flatMap(([, u]) => u);
      const info = Membership.decode(await this.cfg.fetchMembership(others));
      const me = [...info.members.values()].find((m) => m.peerURLs.some((u) => self.includes(u)));
      if (!me) throw new Error(`the cluster has no member with peer URLs ${self.join(',')}: add it with "member add" first`);
      this.memberId = me.id;
      this.membership = info;
    }
    await writeFile(idFile, encodeIdentity({ memberId: this.memberId, clusterId: this.membership.clusterId }));
  }

  /** Stops the member. A leader first hands leadership to a caught-up voter, so no write is lost. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    if (this.isLeader() && this.membership.voters().length > 1) await this.transferLeadership().catch(() => undefined);
    this.stopped = true;
    clearInterval(this.ticker);
    clearInterval(this.leaseTimer);
    clearInterval(this.flushTimer);
    this.reads.close(etcdError('STOPPED'));
    for (const w of this.appliedWaiters.splice(0)) w.reject(etcdError('STOPPED'));
    for (const id of [...this.waiters.keys()]) this.failWaiter(id, etcdError('STOPPED'));
    clearTimeout(this.waiterTimer);
    this.watchable.close();
    await this.transport.close();
    while (this.processing) await new Promise((r) => setTimeout(r, 5));
    await this.kv.close();
    await this.storage.close();
    this.log.info('member stopped');
    this.resolveDone();
  }

  private fatal(e: unknown): void {
    this.log.fatal({ err: e }, 'member cannot continue');
    void this.stop();
  }

  private async transferLeadership(): Promise<void> {
    const st = this.node.status();
    let best: NodeId = NONE;
    let bestMatch = -1;
    for (const [id, pr] of st.progress) {
      if (id === this.memberId || pr.isLearner) continue;
      if (pr.match > bestMatch) {
        best = id;
        bestMatch = pr.match;
      }
    }
    if (best === NONE || !this.transport.isActive(best)) return;
    // Bounded: if the transferee cannot take over soon, stop anyway. It is given up at once when the
    // transferee's connection drops: every member stopping together (Ctrl-C on `setpoint up`) then takes a
    // moment, not two election timeouts.
    await this.moveLeader(String(best), 2 * this.cfg.electionMs, () => !this.transport.isActive(best));
    if (this.softState.lead !== best) this.log.info({ transferee: best.toString(16) }, 'stopping without a hand-over: the transferee went away');
  }

  // ---- the Ready loop ----

  private tick(): void {
    this.node.tick();
    this.kick();
  }

  /** Processes Ready batches until there are none; calls while running make it go round again. */
  private kick(): void {
    if (this.stopped) return;
    if (this.processing) {
      this.again = true;
      return;
    }
    this.processing = true;
    void this.drain()
      .catch((e: unknown) => this.fatal(e))
      .finally(() => {
        this.processing = false;
      });
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      while (!this.stopped && this.node.hasReady()) await this.handleReady(this.node.ready());
    } while (this.again && !this.stopped);
  }

  private async handleReady(rd: Ready): Promise<void> {
    if (rd.softState) this.onSoftState(rd.softState);
    // A leader may send appends and heartbeats while its own write is in flight (thesis §10.2.1); votes
    // and anything else wait until the term and vote they rely on are on disk.
    const termOrVoteChanged = rd.hardState !== undefined && (rd.hardState.term !== this.savedTerm || rd.hardState.vote !== this.savedVote);
    const early = this.softState.raftState === 'leader' && !termOrVoteChanged ? rd.messages.filter((m) => m.type === 'app' || m.type === 'heartbeat' || m.type === 'readIndexResp') : [];
    if (early.length > 0) {
      this.transport.send(early);
      // Let the appends reach the wire before our own write starts: HTTP/2 writes go out in Node's
      // native immediates, which run before this one, and a follower's write is on the commit path
      // while ours, done in parallel, usually is not. Starting the save first delayed them by its
      // synchronous part (encoding, the write's submission).
      await nextTurn();
    }
    const t0 = performance.now();
    await this.storage.save(rd);
    if (rd.mustSync) this.cfg.metrics?.walFsyncSeconds.observe((performance.now() - t0) / 1000);
    if (rd.hardState) {
      this.savedTerm = rd.hardState.term;
      this.savedVote = rd.hardState.vote;
    }
    const rest = early.length > 0 ? rd.messages.filter((m) => !early.includes(m)) : rd.messages;
    if (rest.length > 0) this.transport.send(rest);
    if (rd.snapshot) await this.installSnapshot(rd.snapshot);
    // Messages leave through HTTP/2 writes that Node makes on a later turn of the event loop. Let them go
    // before applying: an apply can hold the loop for seconds (a delete of 150,000 keys), and the followers
    // must learn the new commit index — and get their heartbeats — now, not after it.
    if (rd.messages.length > 0 && rd.committedEntries.length > 0) await nextTurn();
    if (this.cfg.leaderApplyDelayMs && rd.committedEntries.length > 0 && this.softState.raftState === 'leader') await sleep(this.cfg.leaderApplyDelayMs);
    for (const e of rd.committedEntries) {
      const waiting = this.applyEntry(e);
      if (waiting) await waiting;
    }
    for (const rs of rd.readStates) this.reads.onReadState(rs);
    this.node.advance();
    this.reads.onApplied();
    this.releaseAppliedWaiters();
    this.cfg.metrics?.proposalsCommitted.set(this.node.committed());
    this.cfg.metrics?.proposalsApplied.set(this.node.applied());
    this.cfg.metrics?.dbSize.set(this.kv.size());
    await this.maybeSnapshot();
  }

  private savedTerm = 0;
  private savedVote: NodeId = NONE;

  private onSoftState(ss: SoftState): void {
    const wasLeader = this.softState.raftState === 'leader';
    const leaderChanged = ss.lead !== this.softState.lead;
    this.softState = ss;
    if (leaderChanged) {
      this.log.info({ leader: ss.lead.toString(16), term: this.node.term() }, ss.lead === NONE ? 'lost leader' : 'leader changed');
      this.cfg.metrics?.hasLeader.set(ss.lead === NONE ? 0 : 1);
      if (ss.lead !== NONE) this.cfg.metrics?.leaderChanges.inc();
      this.reads.onLeaderChange();
      // Proposals held while there was no leader go now rather than at their next retry.
      if (ss.lead !== NONE && this.batch.length > 0) setImmediate(() => this.flushProposals());
    }
    const isLeader = ss.raftState === 'leader';
    if (isLeader && !wasLeader) {
      // Only the leader runs lease clocks; extend every lease so a failover does not expire them all.
      this.kv.leasePromote(this.cfg.electionMs);
    } else if (!isLeader && wasLeader) {
      this.kv.leaseDemote();
    }
    if (ss.lead !== NONE && !this.published) this.publish();
  }

  /**
   * Publishes our name and client URLs to the cluster once a leader exists, trying again until it applies
   * (etcd's publish): a proposal lost on its way to a leader not reachable yet must not leave this member
   * without client URLs in every member list.
   */
  private publish(): void {
    this.published = true;
    const m = this.membership.members.get(this.memberId);
    if (m && m.name === this.cfg.name && sameList(m.clientURLs, this.cfg.clientURLs)) return;
    // Called from the Ready loop: a refusal to propose must reject, not throw there.
    const attempt = async (): Promise<void> => {
      await this.proposeRequest({ t: 'memberAttr', id: this.nextReqId(), memberId: String(this.memberId), name: this.cfg.name, clientURLs: [...this.cfg.clientURLs] });
    };
    attempt().catch(() => {
      this.published = false;
      setTimeout(() => {
        if (!this.published && !this.stopped && this.softState.lead !== NONE) this.publish();
      }, this.cfg.heartbeatMs);
    });
  }

  // ---- applying ----

  /** Applies one committed entry; a promise only when it has to wait, which a put or txn (the hot path) never does while no write is queued ahead of it. */
  private applyEntry(e: Entry): Promise<void> | undefined {
    if (e.type === 'confChange') {
      this.applyConfChange(e);
      return undefined;
    }
    if (e.data.length === 0) {
      // The leader's no-op.
      if (e.index > this.kv.consistentIndex) this.kv.markApplied(e.index);
      return undefined;
    }
    const r = decodeRequest(e.data);
    // Replayed after a restart: the key-value store already holds it. The membership does not (it is
    // rebuilt from the last snapshot and the log), so a change to members' attributes applies again.
    const already = e.index <= this.kv.consistentIndex;
    if (already) return this.applyWaiting(e, r, true);
    let result: unknown;
    try {
      // Puts and txns (every write the control plane makes) apply in place when nothing is queued ahead.
      if (r.t === 'put' && this.kv.canPutNow()) result = this.kv.putNow(r.req, e.index);
      else if (r.t === 'txn' && this.kv.canTxnNow(r.req)) result = this.kv.txnNow(r.req, e.index);
      else return this.applyWaiting(e, r, false);
    } catch (err) {
      this.applyFailed(e, r, false, err);
      return undefined;
    }
    this.settle(r.id, undefined, result);
    return undefined;
  }

  private async applyWaiting(e: Entry, r: InternalRequest, already: boolean): Promise<void> {
    try {
      const result = already ? (isMemberRequest(r) ? this.applyMemberRequest(r) : undefined) : await this.applyRequest(r, e.index);
      this.settle(r.id, undefined, result);
    } catch (err) {
      this.applyFailed(e, r, already, err);
    }
  }

  /** A request that failed to apply still moves the consistent index; anything but an etcd error is a bug. */
  private applyFailed(e: Entry, r: InternalRequest, already: boolean, err: unknown): void {
    if (!already && e.index > this.kv.consistentIndex) this.kv.markApplied(e.index);
    if (!(err instanceof EtcdError)) throw err; // a bug: stop rather than diverge
    this.settle(r.id, err, undefined);
  }

  private async applyRequest(r: InternalRequest, index: number): Promise<unknown> {
    switch (r.t) {
      case 'put':
        return this.kv.put(r.req, index);
      case 'deleteRange':
        return this.kv.deleteRange(r.req, index);
      case 'txn':
        return this.kv.txn(r.req, index);
      case 'compact': {
        const { done } = this.kv.compact(r.revision, index);
        return { revision: this.kv.currentRev, done };
      }
      case 'leaseGrant':
        return this.kv.leaseGrant(r.lease, r.ttl, index);
      case 'leaseRevoke': {
        this.revoking.delete(r.lease);
        return { revision: this.kv.leaseRevoke(r.lease, index) };
      }
      case 'alarm': {
        // Alarms are replicated state kept by the key-value store (NOSPACE refuses writes as they apply),
        // so they survive restarts and travel with snapshots, as in etcd's backend.
        const same = (a: { memberId: string; alarm: string }): boolean => a.memberId === r.memberId && a.alarm === r.alarm;
        const now = this.kv.alarms;
        if (r.action === 'ACTIVATE') this.kv.setAlarms(now.some(same) ? now : [...now, { memberId: r.memberId, alarm: r.alarm }]);
        else this.kv.setAlarms(now.filter((a) => !same(a)));
        this.kv.markApplied(index);
        return { alarms: this.alarmList() };
      }
      case 'memberAttr':
      case 'memberUpdate': {
        const result = this.applyMemberRequest(r);
        this.kv.markApplied(index);
        return result;
      }
    }
  }

  private applyMemberRequest(r: MemberRequest): { members: MemberInfo[] } | undefined {
    if (r.t === 'memberAttr') {
      const id = parseMemberId(r.memberId);
      const m = id === undefined ? undefined : this.membership.members.get(id);
      if (m) {
        m.name = r.name;
        m.clientURLs = [...r.clientURLs];
      }
      return undefined;
    }
    const id = parseMemberId(r.memberId);
    const m = id === undefined ? undefined : this.membership.members.get(id);
    if (id === undefined || !m) throw etcdError('MEMBER_NOT_FOUND');
    m.peerURLs = [...r.peerURLs];
    if (id !== this.memberId) this.transport.updatePeer(id, m.peerURLs);
    return { members: this.membership.list() };
  }

  private applyConfChange(e: Entry): void {
    const cc = decodeConfChange(e.data);
    const ctx = cc.context ? decodeConfChangeContext(cc.context) : undefined;
    const cs = this.node.applyConfChange(cc);
    const id = cc.nodeId;
    switch (cc.type) {
      case 'addNode':
      case 'addLearner': {
        const existing = this.membership.members.get(id);
        if (existing) existing.isLearner = cc.type === 'addLearner';
        else if (ctx) this.membership.members.set(id, { ...ctx.member, id, isLearner: cc.type === 'addLearner' });
        if (id !== this.memberId && ctx) this.transport.addPeer(id, ctx.member.peerURLs);
        break;
      }
      case 'removeNode':
        this.membership.members.delete(id);
        this.membership.removed.add(id);
        if (id !== this.memberId) this.transport.removePeer(id);
        else this.leaveCluster('this member was removed from the cluster');
        break;
    }
    if (e.index > this.kv.consistentIndex) this.kv.markApplied(e.index);
    // A fresh snapshot whose configuration includes a new member, so it can catch up from it.
    this.snapshotNow = cc.type !== 'removeNode';
    this.confState = cs;
    if (ctx) this.settle(ctx.reqId, undefined, { members: this.membership.list(), member: this.membership.members.get(id) });
  }

  /** etcd stops a removed member: its requests could only time out, since nobody commits for it. */
  private leaveCluster(why: string): void {
    if (this.removedFromCluster) return;
    this.removedFromCluster = true;
    this.log.warn(`${why}: stopping`);
    setImmediate(() => void this.stop());
  }

  private snapshotNow = false;
  private confState: { voters: readonly NodeId[]; learners: readonly NodeId[] } | undefined;

  private settle(id: string, err: unknown, result: unknown): void {
    const w = this.takeWaiter(id);
    if (!w) return;
    const took = performance.now() - (w.deadline - this.requestTimeoutMs);
    if (took > SLOW_REQUEST_MS) this.noteSlow(took, w.kind);
    if (err) {
      this.cfg.metrics?.proposalsFailed.inc();
      w.reject(err);
    } else w.resolve(result);
  }

  private slow = { count: 0, maxMs: 0, kind: '', loggedAt: -Infinity };

  /**
   * Says why writes are slow where an operator looks: a request applied more than 100 ms after this
   * member proposed it is counted, and a warning goes out at most once a second with the count since the
   * last one and the slowest (the next line after a quiet spell comes with the first slow request).
   */
  private noteSlow(took: number, kind: string): void {
    const s = this.slow;
    s.count++;
    if (took > s.maxMs) {
      s.maxMs = took;
      s.kind = kind;
    }
    const now = performance.now();
    if (now - s.loggedAt < SLOW_LOG_EVERY_MS) return;
    this.log.warn(
      { took: `${Math.round(s.maxMs)}ms`, expectedDuration: `${SLOW_REQUEST_MS}ms`, request: s.kind, slowRequests: s.count, role: this.softState.raftState },
      'request took too long',
    );
    this.slow = { count: 0, maxMs: 0, kind: '', loggedAt: now };
  }

  /** Rejects one waiting proposal, if it is still waiting. */
  private failWaiter(id: string, err: unknown): void {
    this.takeWaiter(id)?.reject(err);
  }

  /** Removes a proposal's waiter (it is about to be settled); undefined if it was no longer waiting. */
  private takeWaiter(id: string): Waiter | undefined {
    const w = this.waiters.get(id);
    if (!w) return undefined;
    this.waiters.delete(id);
    this.cfg.metrics?.proposalsPending.dec();
    return w;
  }

  /** Takes a Raft snapshot every snapshot-count entries (and after a member joins), then trims the log. */
  private async maybeSnapshot(): Promise<void> {
    const applied = this.node.applied();
    if (!this.snapshotNow && applied - this.lastSnapshotIndex < this.cfg.snapshotCount) return;
    if (applied <= this.lastSnapshotIndex) return;
    this.snapshotNow = false;
    // The key-value state up to `applied` must be on disk before the log that could rebuild it goes.
    await this.kv.flush(true);
    await this.storage.createSnapshot(applied, this.node.confState(), this.membership.encode());
    this.lastSnapshotIndex = applied;
    const compactTo = applied - this.cfg.snapshotCatchUpEntries;
    if (compactTo > this.storage.firstIndex()) await this.storage.compact(compactTo);
    this.log.debug({ index: applied, compactTo }, 'snapshot taken');
  }

  /** A snapshot from the leader was persisted: replace the key-value state with the staged copy. */
  private async installSnapshot(snap: Snapshot): Promise<void> {
    this.membership = Membership.decode(snap.data);
    for (const m of this.membership.members.values()) if (m.id !== this.memberId) this.transport.addPeer(m.id, m.peerURLs);
    const staged = this.stagedSnapshot;
    this.stagedSnapshot = undefined;
    if (staged) {
      await this.kv.replaceWith(readChunks(staged));
      await rm(staged, { force: true });
    }
    this.lastSnapshotIndex = snap.metadata.index;
    this.log.info({ index: snap.metadata.index, revision: this.kv.currentRev }, 'installed snapshot from leader');
  }

  /**
   * Resolves once this member has applied every entry committed when it was called (etcd's
   * waitAppliedIndex). A leader answers lease renewals, and lease questions forwarded by followers, from its
   * own lessor, and it applies a commit only after telling its followers of it: without this wait, a client
   * granted a lease through a follower could have its first keep-alive answered "no such lease" (TTL 0) by a
   * leader that had not applied the grant yet, and its session would end at once.
   */
  private waitAppliedCommitted(): Promise<void> {
    const index = this.node.committed();
    if (this.node.applied() >= index) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const w: AppliedWaiter = {
        index,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.appliedWaiters = this.appliedWaiters.filter((x) => x !== w);
        reject(etcdError('TIMEOUT'));
      }, this.requestTimeoutMs);
      this.appliedWaiters.push(w);
    });
  }

  private releaseAppliedWaiters(): void {
    if (this.appliedWaiters.length === 0) return;
    const applied = this.node.applied();
    const still: AppliedWaiter[] = [];
    for (const w of this.appliedWaiters) {
      if (w.index <= applied) w.resolve();
      else still.push(w);
    }
    this.appliedWaiters = still;
  }

  // ---- proposing ----

  private nextReqId(): string {
    return `${this.memberId.toString(36)}.${(this.reqSeq++).toString(36)}`;
  }

  private isLeader(): boolean {
    return this.softState.raftState === 'leader';
  }

  private checkAcceptingWrites(): void {
    if (this.stopped) throw etcdError('STOPPED');
    if (this.node.committed() - this.node.applied() > MAX_GAP_BETWEEN_APPLY_AND_COMMIT) throw etcdError('TOO_MANY_REQUESTS');
  }

  /** Proposes a request and resolves with its applied result. */
  private proposeRequest<T>(r: InternalRequest): Promise<T> {
    this.checkAcceptingWrites();
    const data = encodeRequest(r);
    return this.waitFor<T>(r.id, r.t, () => this.enqueueProposal(data));
  }

  /**
   * A promise settled when request `id` is applied (settle) or fails. Waiters share one timer instead of
   * a timer each: with thousands of requests in flight, a timer, two closures and a `finally` per request
   * were garbage that every scavenge had to copy while the request waited.
   */
  private waitFor<T>(id: string, kind: string, propose: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiters.set(id, { resolve: resolve as (v: unknown) => void, reject, deadline: performance.now() + this.requestTimeoutMs, kind });
      this.cfg.metrics?.proposalsPending.inc();
      this.waiterTimer ??= setTimeout(() => this.sweepWaiters(), this.requestTimeoutMs);
      try {
        propose();
      } catch (e) {
        this.failWaiter(id, e);
      }
    });
  }

  /** Fails the waiters whose deadline has passed (the oldest first) and sets the timer for the next one. */
  private sweepWaiters(): void {
    this.waiterTimer = undefined;
    const now = performance.now();
    for (const [id, w] of this.waiters) {
      if (w.deadline > now) {
        this.waiterTimer = setTimeout(() => this.sweepWaiters(), w.deadline - now);
        return;
      }
      this.failWaiter(id, etcdError(this.softState.lead === NONE ? 'TIMEOUT_DUE_TO_LEADER_FAIL' : 'TIMEOUT'));
    }
  }

  private enqueueProposal(data: Uint8Array): void {
    this.batch.push(data);
    if (this.batchScheduled) return;
    this.batchScheduled = true;
    setImmediate(() => this.flushProposals());
  }

  /** A follower's proposals and read requests go to the leader at once, not with the next Ready (RawNode.takeForwards). */
  private sendForwards(): void {
    const fw = this.node.takeForwards();
    if (fw.length > 0) this.transport.send(fw);
  }

  /** Proposes everything gathered since the last turn as one batch; waits for a leader if there is none. */
  private flushProposals(): void {
    this.batchScheduled = false;
    if (this.batch.length === 0 || this.stopped) return;
    if (this.softState.lead === NONE) {
      // Nobody to propose to yet: keep the batch and try again shortly (callers time out on their own).
      this.batchScheduled = true;
      setTimeout(() => this.flushProposals(), this.cfg.heartbeatMs);
      return;
    }
    const datas = this.batch;
    this.batch = [];
    try {
      this.node.proposeBatch(datas);
      this.sendForwards();
    } catch (e) {
      if (!(e instanceof RaftError) || e.code !== 'RAFT_PROPOSAL_DROPPED') throw e;
      // Leader transfer in progress or leadership just lost: retry after a beat; nothing was appended.
      this.batch = datas.concat(this.batch);
      this.batchScheduled = true;
      setTimeout(() => this.flushProposals(), this.cfg.heartbeatMs);
      return;
    }
    this.kick();
  }

  // ---- StoreApi: KV ----

  /** The last header made, with the ids it was made for: watch streams ask for one per response. */
  private lastHeader: { readonly header: Header; readonly cluster: NodeId; readonly member: NodeId } | undefined;

  header(revision?: number): Header {
    const rev = revision ?? this.kv.currentRev;
    const term = this.node.term();
    const cluster = this.membership.clusterId;
    const last = this.lastHeader;
    if (last && last.header.revision === rev && last.header.raftTerm === term && last.cluster === cluster && last.member === this.memberId) return last.header;
    const header = { clusterId: String(cluster), memberId: String(this.memberId), revision: rev, raftTerm: term };
    this.lastHeader = { header, cluster, member: this.memberId };
    return header;
  }

  private async linearize(serializable: boolean): Promise<void> {
    if (this.stopped) throw etcdError('STOPPED');
    if (serializable || this.cfg.unsafeLocalReads) return;
    if (this.node.isLearner()) throw etcdError('NOT_SUPPORTED_FOR_LEARNER');
    await this.reads.wait();
  }

  async range(req: RangeRequest): Promise<RangeResponse> {
    checkRange(req);
    await this.linearize(req.serializable === true);
    return this.kv.range(req);
  }

  /** Refuses a write that would take the store past its quota, raising the NOSPACE alarm (etcd). */
  private checkQuota(cost: number): void {
    if (this.kv.noSpaceAlarm) throw etcdError('NO_SPACE');
    if (cost > 0 && this.kv.size() + cost > this.cfg.quotaBackendBytes) {
      void this.alarm('ACTIVATE', String(this.memberId), 'NOSPACE').catch(() => undefined);
      throw etcdError('NO_SPACE');
    }
  }

  async put(req: PutRequest): Promise<PutResponse> {
    checkPut(req);
    this.checkQuota(putCost(req));
    return this.proposeRequest<PutResponse>({ t: 'put', id: this.nextReqId(), req });
  }

  async deleteRange(req: DeleteRangeRequest): Promise<DeleteRangeResponse> {
    checkRange(req);
    return this.proposeRequest<DeleteRangeResponse>({ t: 'deleteRange', id: this.nextReqId(), req });
  }

  async txn(req: TxnRequest): Promise<TxnResponse> {
    checkTxn(req);
    if (isReadOnly(req)) {
      // A read-only txn is served like a range: linearizable through ReadIndex, no log entry.
      await this.linearize(false);
      return this.kv.txn(req);
    }
    this.checkQuota(putBytes(req));
    return this.proposeRequest<TxnResponse>({ t: 'txn', id: this.nextReqId(), req });
  }

  async compact(revision: number, physical: boolean): Promise<{ revision: number }> {
    const r = await this.proposeRequest<{ revision: number; done: Promise<void> }>({ t: 'compact', id: this.nextReqId(), revision });
    if (physical) await r.done;
    return { revision: r.revision };
  }

  openWatchStream(send: WatchResponseSender): WatchStream {
    return new WatchStream(this.watchable, send, { logger: this.cfg.logger });
  }

  // ---- StoreApi: leases ----

  async leaseGrant(id: string, ttl: number): Promise<{ id: string; ttl: number }> {
    this.checkQuota(64);
    const lease = id === '0' || id === '' ? randomLeaseId() : id;
    return this.proposeRequest<{ id: string; ttl: number }>({ t: 'leaseGrant', id: this.nextReqId(), lease, ttl });
  }

  async leaseRevoke(id: string): Promise<{ revision: number }> {
    return this.proposeRequest<{ revision: number }>({ t: 'leaseRevoke', id: this.nextReqId(), lease: id });
  }

  async leaseKeepAlive(id: string): Promise<{ id: string; ttl: number }> {
    if (this.isLeader()) {
      await this.waitAppliedCommitted();
      return { id, ttl: this.kv.leaseRenew(id) };
    }
    const lead = this.softState.lead;
    if (lead === NONE) throw etcdError('NO_LEADER');
    return { id, ttl: (await this.transport.leaseKeepAlive(lead, id)).ttl };
  }

  async leaseTimeToLive(id: string, keys: boolean): Promise<{ id: string; ttl: number; grantedTtl: number; keys: Uint8Array[] }> {
    if (this.isLeader()) return this.localTimeToLive(id, keys);
    const lead = this.softState.lead;
    if (lead === NONE) throw etcdError('NO_LEADER');
    return { id, ...(await this.transport.leaseTimeToLive(lead, id, keys)) };
  }

  private localTimeToLive(id: string, keys: boolean): { id: string; ttl: number; grantedTtl: number; keys: Uint8Array[] } {
    const t = this.kv.leaseTimeToLive(id, keys);
    return { id, ttl: t.ttl, grantedTtl: t.grantedTtl, keys: t.keys.map((k) => Buffer.from(k, 'latin1')) };
  }

  async leaseLeases(): Promise<{ ids: string[] }> {
    await this.linearize(false);
    return { ids: this.kv.leaseList() };
  }

  /** Leader only: proposes the revocation of leases whose time is up. */
  private expireLeases(): void {
    if (!this.isLeader() || this.stopped) return;
    for (const id of this.kv.expiredLeases(500)) {
      if (this.revoking.has(id)) continue;
      this.revoking.add(id);
      this.log.debug({ lease: id }, 'lease expired');
      this.leaseRevoke(id).catch(() => this.revoking.delete(id));
    }
  }

  // ---- StoreApi: cluster ----

  async memberList(): Promise<{ members: MemberInfo[] }> {
    return { members: this.membership.list() };
  }

  async memberAdd(requested: readonly string[], isLearner: boolean): Promise<{ member: MemberInfo; members: MemberInfo[] }> {
    // As etcd's types.NewURLs: the URLs the id is derived from, checked, normalized and sorted.
    let peerURLs: string[];
    try {
      peerURLs = parsePeerURLs(requested);
    } catch {
      throw etcdError('MEMBER_BAD_URLS');
    }
    // As etcd: checked before the conflicts below (which etcd finds only when the change applies).
    this.strictReconfigCheck('add', (v) => checkAdd(v, isLearner));
    for (const u of peerURLs) if (this.membership.byPeerURL(u)) throw etcdError('PEER_URL_EXIST');
    if (isLearner && this.membership.learners().length >= MAX_LEARNERS) throw etcdError('TOO_MANY_LEARNERS');
    // As etcd's MemberAdd: no cluster token, and the time in seconds.
    const id = memberIdFor(peerURLs, '', Math.floor(Date.now() / 1000));
    if (this.membership.members.has(id) || this.membership.removed.has(id)) throw etcdError('MEMBER_EXIST');
    const member: ClusterMember = { id, name: '', peerURLs, clientURLs: [], isLearner };
    const r = await this.proposeConfChange<{ member: ClusterMember; members: MemberInfo[] }>(isLearner ? 'addLearner' : 'addNode', id, member);
    return { member: toInfo(r.member), members: r.members };
  }

  async memberRemove(id: string): Promise<{ members: MemberInfo[] }> {
    const n = parseMemberId(id) ?? NONE;
    this.strictReconfigCheck('remove', (v) => checkRemove(v, n));
    const m = this.membership.members.get(n);
    if (!m) throw etcdError('MEMBER_NOT_FOUND');
    return this.proposeConfChange<{ members: MemberInfo[] }>('removeNode', n, m);
  }

  async memberPromote(id: string): Promise<{ members: MemberInfo[] }> {
    const n = parseMemberId(id) ?? NONE;
    if (this.isLeader()) return this.promoteAsLeader(n);
    this.promotableLearner(n);
    // Only the leader knows how far the learner has got: as etcd, a follower hands it the whole request.
    const lead = this.softState.lead;
    if (lead === NONE) throw etcdError('NO_LEADER');
    return this.transport.memberPromote(lead, n);
  }

  /**
   * --strict-reconfig-check, on the member asked (for a promotion, the leader): throws the refusal `check`
   * finds in the membership as this member sees it and in how long its links to peers have been up.
   */
  private strictReconfigCheck(change: 'add' | 'remove' | 'promote', check: (v: ReconfigView) => ReconfigRefusal | undefined): void {
    if (this.cfg.strictReconfigCheck === false) return;
    const refusal = check({
      self: this.memberId,
      members: this.membership.members.values(),
      activeSince: (id) => this.transport.activeSince(id),
      now: performance.now(),
    });
    if (refusal === undefined) return;
    this.log.warn({ change, refusal }, 'membership change refused by the strict reconfiguration check');
    throw etcdError(refusal);
  }

  /** The learner `id`, or the error etcd gives for promoting something else. */
  private promotableLearner(id: NodeId): ClusterMember {
    const m = this.membership.members.get(id);
    if (!m) throw etcdError('MEMBER_NOT_FOUND');
    if (!m.isLearner) throw etcdError('MEMBER_NOT_LEARNER');
    return m;
  }

  /** Leader only (asked by a client or by a follower that forwarded the request). */
  private promoteAsLeader(id: NodeId): Promise<{ members: MemberInfo[] }> {
    const m = this.promotableLearner(id);
    if (!this.learnerInSync(id)) throw etcdError('LEARNER_NOT_READY');
    this.strictReconfigCheck('promote', checkPromote);
    return this.proposeConfChange<{ members: MemberInfo[] }>('addNode', id, m);
  }

  /** Leader only: etcd promotes only a learner whose log is within 10% of the leader's. */
  private learnerInSync(id: NodeId): boolean {
    const st = this.node.status();
    const pr = st.progress.get(id);
    const leaderMatch = st.progress.get(this.memberId)?.match ?? st.lastIndex;
    return pr !== undefined && pr.match >= leaderMatch * 0.9;
  }

  /**
   * Leader only: drops from a follower's proposals the promotion of a learner that is not in sync. Only
   * the leader knows how far a learner has got, and a voter that holds nothing would count towards the
   * quorum. Followers forward promotion requests (memberPromote) instead of proposing them; this guards
   * against the races left: a member that checked as leader and lost leadership before its proposal went
   * out hands that proposal, unchecked, to the new leader.
   */
  private withoutEarlyPromotions(m: Message): Message | undefined {
    const kept = m.entries.filter((e) => {
      if (e.type !== 'confChange') return true;
      const cc = decodeConfChange(e.data);
      return !(cc.type === 'addNode' && this.membership.members.get(cc.nodeId)?.isLearner === true && !this.learnerInSync(cc.nodeId));
    });
    if (kept.length === m.entries.length) return m;
    this.log.warn({ from: m.from.toString(16) }, 'dropped a forwarded promotion of a learner that is not in sync with the leader');
    return kept.length > 0 ? { ...m, entries: kept } : undefined;
  }

  async memberUpdate(id: string, peerURLs: readonly string[]): Promise<{ members: MemberInfo[] }> {
    const n = parseMemberId(id);
    if (n === undefined || !this.membership.members.has(n)) throw etcdError('MEMBER_NOT_FOUND');
    for (const u of peerURLs) if (!isUrl(u)) throw etcdError('MEMBER_BAD_URLS');
    return this.proposeRequest<{ members: MemberInfo[] }>({ t: 'memberUpdate', id: this.nextReqId(), memberId: id, peerURLs: [...peerURLs] });
  }

  private proposeConfChange<T>(type: 'addNode' | 'addLearner' | 'removeNode', nodeId: NodeId, member: ClusterMember): Promise<T> {
    this.checkAcceptingWrites();
    const reqId = this.nextReqId();
    const context = encodeConfChangeContext({ reqId, member });
    return this.waitFor<T>(reqId, 'confChange', () => {
      if (this.softState.lead === NONE) throw etcdError('NO_LEADER');
      try {
        this.node.proposeConfChange({ type, nodeId, context });
      } catch (e) {
        // One membership change at a time: the core refuses a second while one is pending.
        if (e instanceof RaftError && e.code === 'RAFT_PROPOSAL_DROPPED') throw etcdError('UNHEALTHY');
        throw e;
      }
      this.kick();
    });
  }

  // ---- StoreApi: maintenance ----

  async status(): Promise<StatusInfo> {
    const st = this.node.status();
    return {
      version: SERVER_VERSION,
      dbSize: this.kv.size(),
      dbSizeInUse: this.kv.size(),
      leader: String(this.softState.lead),
      raftIndex: st.hardState.commit,
      raftTerm: st.hardState.term,
      raftAppliedIndex: st.applied,
      errors: this.alarmList().map((a) => `memberID:${a.memberId} alarm:${a.alarm} `),
      isLearner: this.node.isLearner(),
    };
  }

  async hash(): Promise<{ hash: number }> {
    return { hash: (await this.kv.hashKV(0)).hash };
  }

  async hashKV(revision: number): Promise<{ hash: number; compactRevision: number }> {
    const h = await this.kv.hashKV(revision);
    // etcd's compactMainRev starts at -1, and HashKV reports it as is until the first compaction.
    return { hash: h.hash, compactRevision: h.compactRevision > 0 ? h.compactRevision : -1 };
  }

  async alarm(action: 'GET' | 'ACTIVATE' | 'DEACTIVATE', memberId: string, alarm: AlarmType): Promise<{ alarms: AlarmMember[] }> {
    if (action === 'GET') {
      const all = this.alarmList();
      return { alarms: alarm === 'NONE' ? all : all.filter((a) => a.alarm === alarm) };
    }
    return this.proposeRequest<{ alarms: AlarmMember[] }>({ t: 'alarm', id: this.nextReqId(), action, memberId, alarm });
  }

  /** Only alarms proposed through alarm() are ever stored. */
  private alarmList(): AlarmMember[] {
    return this.kv.alarms.map((a) => ({ memberId: a.memberId, alarm: a.alarm as AlarmType }));
  }

  async defragment(): Promise<void> {
    await this.kv.defragment();
  }

  snapshot(): AsyncIterable<Uint8Array> {
    return this.kv.etcdSnapshot(this.membership.list());
  }

  /** Hands leadership to the member; `giveUp` (asked every heartbeat) ends the wait early, without error. */
  async moveLeader(targetId: string, timeoutMs = this.requestTimeoutMs, giveUp?: () => boolean): Promise<void> {
    if (!this.isLeader()) throw etcdError('NOT_LEADER');
    const target = parseMemberId(targetId) ?? NONE;
    const m = this.membership.members.get(target);
    if (!m || m.isLearner) throw etcdError('BAD_LEADER_TRANSFEREE');
    if (target === this.memberId) return;
    this.node.transferLeader(target);
    this.kick();
    const deadline = Date.now() + timeoutMs;
    while (this.softState.lead !== target) {
      if (giveUp?.()) return;
      if (Date.now() > deadline) throw etcdError('TIMEOUT');
      await new Promise((r) => setTimeout(r, this.cfg.heartbeatMs));
    }
  }

  /** From the membership, as etcd's IsLearner: right from the start for a member that joined as one. */
  isLearner(): boolean {
    return this.membership.members.get(this.memberId)?.isLearner ?? false;
  }

  async health(): Promise<{ health: boolean; reason: string }> {
    if (this.softState.lead === NONE) return { health: false, reason: 'RAFT NO LEADER' };
    const alarms = this.alarmList();
    if (alarms.length > 0) return { health: false, reason: `ALARM ${alarms.map((a) => a.alarm).join(',')}` };
    return { health: true, reason: '' };
  }

  // ---- transport wiring ----

  private inbound(): InboundHandlers {
    return {
      onMessage: (received: Message) => {
        if (this.stopped) return;
        const m = received.type === 'prop' && this.isLeader() ? this.withoutEarlyPromotions(received) : received;
        if (!m) return;
        try {
          this.node.step(m);
        } catch (e) {
          if (!(e instanceof RaftError)) throw e;
          this.log.debug({ err: e, type: m.type, from: m.from.toString(16) }, 'dropped peer message');
          return;
        }
        this.kick();
      },
      receiveSnapshot: async (m: Message, kv: AsyncIterable<Uint8Array>) => {
        const path = join(this.memberDir, `snapshot-${m.snapshot?.metadata.index ?? 0}.tmp`);
        await writeChunks(path, kv);
        this.stagedSnapshot = path;
        this.node.step(m);
        this.kick();
      },
      clusterInfo: () => this.membership.encode(),
      leaseKeepAlive: async (id: string) => {
        if (!this.isLeader()) throw etcdError('NOT_LEADER');
        await this.waitAppliedCommitted();
        return { ttl: this.kv.leaseRenew(id) };
      },
      leaseTimeToLive: async (id: string, keys: boolean) => {
        if (!this.isLeader()) throw etcdError('NOT_LEADER');
        await this.waitAppliedCommitted();
        const t = this.localTimeToLive(id, keys);
        return { ttl: t.ttl, grantedTtl: t.grantedTtl, keys: t.keys };
      },
      memberPromote: async (id: NodeId) => {
        if (!this.isLeader()) throw etcdError('NOT_LEADER');
        return this.promoteAsLeader(id);
      },
    };
  }

  private outbound(): OutboundHooks {
    return {
      reportUnreachable: (id) => {
        this.node.reportUnreachable(id);
        this.kick();
      },
      connectionLost: (id) => this.onConnectionLost(id),
      reportSnapshot: (id, ok) => {
        this.node.reportSnapshot(id, ok);
        this.kick();
      },
      kvSnapshot: () => this.kv.snapshot(),
      // Its own removal may never reach a removed follower: the peers' refusal is how it learns.
      removedFromCluster: () => this.leaveCluster('a peer refused this member as removed from the cluster'),
    };
  }

  /**
   * Our stream to `id` broke. When `id` is our leader, its process has most likely died (its kernel reset
   * the connection), so instead of waiting out an election timeout this follower ends the leader's lease
   * and campaigns after a short pause (campaignPause). The campaign starts with a pre-vote, which members
   * still hearing from a live leader refuse, so a connection that broke under a healthy leader disturbs
   * nothing. A leader lost to a dead host or a partition, where no reset arrives, is still found by the
   * election timeout.
   */
  private onConnectionLost(id: NodeId): void {
    if (this.stopped || !this.node.leaderConnectionLost(id)) return;
    const pause = this.campaignPause(id);
    this.log.warn({ leader: id.toString(16), pauseMs: Math.round(pause) }, 'connection to the leader lost; campaigning unless it comes back');
    setTimeout(() => {
      if (this.stopped || !this.node.leaseEnded()) return;
      this.node.campaign();
      this.kick();
    }, pause).unref();
  }

  /**
   * The surviving voters take turns by member id, two heartbeats apart, each turn jittered by up to half a
   * heartbeat: the first campaigns almost at once and usually wins uncontested, and the turns never
   * overlap, so two survivors do not split the vote (a uniform pause of up to two heartbeats did that now
   * and then, and cost 70 ms on average before anyone campaigned). A survivor that is down or slow to
   * notice holds the next one up by no more than its turn; one whose pre-vote came too early, before the
   * other noticed the loss, is granted that one's pre-vote in turn, its own lease being over.
   */
  private campaignPause(lost: NodeId): number {
    const rank = this.membership.voters().filter((v) => v !== lost && v < this.memberId).length;
    return (rank * 2 + Math.random() / 2) * this.cfg.heartbeatMs;
  }

  /** For tests and the CLI: the member's view right now. */
  info(): { memberId: string; leader: string; term: number; applied: number; revision: number } {
    return { memberId: String(this.memberId), leader: String(this.softState.lead), term: this.node.term(), applied: this.node.applied(), revision: this.kv.currentRev };
  }
}

// ---- helpers ----

type MemberRequest = Extract<InternalRequest, { t: 'memberAttr' | 'memberUpdate' }>;

function isMemberRequest(r: InternalRequest): r is MemberRequest {
  return r.t === 'memberAttr' || r.t === 'memberUpdate';
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function isUrl(u: string): boolean {
  try {
    const p = new URL(u);
    return p.protocol === 'http:' || p.protocol === 'https:' || p.protocol === 'unix:' || p.protocol === 'unixs:';
  } catch {
    return false;
  }
}

/** Lease ids are positive int64s chosen by the member that proposes the grant. */
function randomLeaseId(): string {
  const b = randomBytes(8);
  b[0] = (b[0] as number) & 0x7f;
  const id = b.readBigUInt64BE(0);
  return (id === 0n ? 1n : id).toString();
}

function isReadOnly(req: TxnRequest): boolean {
  const ops = [...(req.success ?? []), ...(req.failure ?? [])];
  return ops.every((op) => 'requestRange' in op || ('requestTxn' in op && isReadOnly(op.requestTxn)));
}

function putBytes(req: TxnRequest): number {
  let n = 0;
  for (const op of [...(req.success ?? []), ...(req.failure ?? [])]) {
    if ('requestPut' in op) n += putCost(op.requestPut);
    else if ('requestTxn' in op) n += putBytes(op.requestTxn);
  }
  return n;
}

/** Stages snapshot chunks in a file: length-prefixed records. */
async function writeChunks(path: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
  const fh = await open(path, 'w');
  try {
    for await (const c of chunks) {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(c.length, 0);
      await fh.write(len);
      await fh.write(c);
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function* readChunks(path: string): AsyncGenerator<Uint8Array> {
  const fh = await open(path, 'r');
  try {
    const len = Buffer.alloc(4);
    for (;;) {
      const r = await fh.read(len, 0, 4, null);
      if (r.bytesRead < 4) return;
      const n = len.readUInt32BE(0);
      const buf = Buffer.alloc(n);
      const got = await fh.read(buf, 0, n, null);
      if (got.bytesRead < n) throw new Error(`${path}: truncated snapshot chunk`);
      yield buf;
    }
  } finally {
    await fh.close();
  }
}

