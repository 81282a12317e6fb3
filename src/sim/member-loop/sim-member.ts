// One store member under simulation: the member's own Ready loop, proposals and their waiters, applier and
// ReadIndex barrier (src/server/member/), built as Member builds them, with a simulated disk, network and
// clock where a process has real ones. Every Ready is checked by the safety checker as it is persisted and
// applied. A crash throws the process away (its timers, waiters and unsynced writes); the applied
// key-value state and the durable log survive.
import { pino } from 'pino';
import type { Rng } from '../../raft/rng.js';
import type { Entry, Message, NodeId, Ready, SoftState } from '../../raft/types.js';
import type { PutResponse } from '../../kv/types.js';
import type { PlantedLoopBug } from '../../server/member/planted-bugs.js';
import type { MemberConfig } from '../../server/member/member-config.js';
import type { NodeStatus, NodeRaftOptions } from '../sim-node.js';
import type { SafetyChecker } from '../safety-checker.js';
import type { KvCell } from '../kv-machine.js';
import type { MemberView } from '../liveness.js';
import { RawNode } from '../../raft/raw-node.js';
import { RaftError } from '../../raft/errors.js';
import { NONE } from '../../raft/types.js';
import { MemberCore } from '../../server/member/member-core.js';
import { Membership } from '../../server/member/membership.js';
import { Proposals } from '../../server/member/proposals.js';
import { ReadBarrier } from '../../server/member/read-barrier.js';
import { Applier } from '../../server/member/applier.js';
import { Leases } from '../../server/member/leases.js';
import { ReadyLoop } from '../../server/member/ready-loop.js';
import { entryFingerprint, mixInt } from '../hash.js';
import { SimDisk, type DiskTiming } from './sim-disk.js';
import { SimKv, type LeaseObserver } from './sim-kv.js';
import { SimTimers, type SimScheduler } from './sim-scheduler.js';
import { SimTransport } from './sim-transport.js';

/** Simulated milliseconds per tick: the heartbeat interval. */
export const TICK_MS = 100;

/** What every member shares: time, the checker, the network, the knobs of the run. */
export interface MemberEnv {
  readonly sched: SimScheduler;
  readonly checker: SafetyChecker;
  readonly raft: NodeRaftOptions;
  readonly disk: DiskTiming;
  readonly plantedBug?: PlantedLoopBug;
  send(from: SimMember, m: Message): void;
  /** A member's loop stopped on an error (a check that failed inside it, or the member code itself). */
  fatal(e: unknown): void;
  /** A member became leader of a new term (the checker agreed). */
  onNewLeader(id: NodeId, term: number): void;
  /** Sees each member apply lease grants and revocations. */
  leaseObserver(id: NodeId): LeaseObserver;
}

/** How often the leader looks for expired leases to revoke (Member's lease timer). */
const LEASE_SWEEP_MS = 500;

const silent = pino({ level: 'silent' });
const encoder = new TextEncoder();

/** A member's configuration as the simulation starts it: no disk, no ports, its virtual clock. */
function simConfig(id: NodeId, clock: SimTimers, electionTick: number): MemberConfig {
  return {
    name: `m${id}`,
    dataDir: '',
    peerURLs: [],
    clientURLs: [],
    initialCluster: new Map(),
    initialClusterState: 'new',
    initialClusterToken: 'sim',
    heartbeatMs: TICK_MS,
    electionMs: electionTick * TICK_MS,
    snapshotCount: Number.POSITIVE_INFINITY,
    snapshotCatchUpEntries: 0,
    quotaBackendBytes: Number.POSITIVE_INFINITY,
    logger: silent,
    clock,
    transport: () => Promise.reject(new Error('sim: the transport is given to the member directly')),
  };
}

/** The live parts of one incarnation (one process lifetime). */
interface Process {
  readonly c: MemberCore<SimKv>;
  readonly raw: RawNode;
  readonly timers: SimTimers;
  readonly proposals: Proposals;
  readonly reads: ReadBarrier;
  readonly leases: Leases;
  readonly loop: ReadyLoop;
}

export class SimMember {
  readonly disk: SimDisk;
  readonly kv: SimKv;
  status: NodeStatus = 'down';
  incarnation = 0;
  downSince = 0;
  /** The simulated disk loses every unsynced write in a crash, so a crash is always "torn". */
  tornNext = false;
  private p: Process | undefined;

  constructor(
    readonly id: NodeId,
    voters: readonly NodeId[],
    private readonly env: MemberEnv,
    rng: Rng,
  ) {
    this.disk = new SimDisk(voters, env.sched, rng, env.disk);
    // As Member.start opens its store: the minimum TTL is 1.5 election timeouts, in whole seconds.
    this.kv = new SimKv(() => env.sched.now, Math.ceil((1.5 * env.raft.electionTick * TICK_MS) / 1000), env.leaseObserver(id));
  }

  get raw(): RawNode | undefined {
    return this.p?.raw;
  }

  get softState(): SoftState {
    return this.p?.c.softState ?? { lead: NONE, raftState: 'follower' };
  }

  get applied(): number {
    return this.kv.consistentIndex;
  }

  view(): MemberView {
    const live = this.disk.live;
    const hs = live.getHardState();
    return {
      id: this.id,
      up: this.status === 'up',
      commit: hs.commit,
      lastIndex: live.lastIndex(),
      applied: this.applied,
      digest: () => this.kv.digest(),
      describe: () => `node ${this.id} ${this.status} ${this.softState.raftState} term=${hs.term} commit=${hs.commit} applied=${this.applied} last=${live.lastIndex()} durable=${this.disk.durable.lastIndex()}`,
    };
  }

  start(rng: Rng): void {
    const env = this.env;
    const timers = new SimTimers(env.sched);
    const c = new MemberCore<SimKv>(simConfig(this.id, timers, env.raft.electionTick));
    c.kv = this.kv;
    // As Member.start: restart from the snapshot; the applier skips the entries the store already holds.
    const raw = new RawNode({ ...env.raft, id: this.id, storage: this.disk.live, rng, applied: this.disk.live.snapshot().metadata.index });
    c.node = raw;
    c.memberId = this.id;
    c.membership = new Membership(0n);
    c.transport = new SimTransport((m) => env.send(this, m));
    const proposals = new Proposals(c);
    // As Member.start wires them: a read's ReadIndex goes out at once, forwarded if this member follows.
    const reads = new ReadBarrier({
      readIndex: (ctx) => {
        raw.readIndex(ctx);
        proposals.sendForwards();
        c.kick();
      },
      ctxPrefix: this.id.toString(16),
      applied: () => raw.applied(),
      retryMs: Math.min(500, c.cfg.electionMs),
      timeoutMs: c.requestTimeoutMs,
      clock: timers,
      ...(env.plantedBug !== undefined ? { plantedBug: env.plantedBug } : {}),
    });
    const leases = new Leases(c, proposals, () => reads.wait(), () => undefined);
    const applier = new Applier(c, proposals, {
      leaveCluster: () => undefined,
      snapshotSoon: () => undefined,
      leaseRevoked: (lease) => leases.onRevoked(lease),
    });
    const loop = new ReadyLoop(raw, {
      onSoftState: (ss) => {
        const wasLeader = c.isLeader();
        const leaderChanged = ss.lead !== c.softState.lead;
        c.softState = ss;
        if (leaderChanged) {
          reads.onLeaderChange();
          if (ss.lead !== NONE) proposals.onLeaderFound();
        }
        leases.onRoleChange(wasLeader, c.isLeader());
      },
      isLeader: () => c.isLeader(),
      save: (rd) => this.save(rd, timers),
      send: (messages) => c.transport.send(messages),
      installSnapshot: () => Promise.reject(new Error('sim: the member-loop simulation never compacts, so no snapshot is sent')),
      apply: (e) => this.apply(e, applier),
      onReadState: (rs) => reads.onReadState(rs),
      afterAdvance: () => {
        reads.onApplied();
        proposals.onApplied();
        return Promise.resolve();
      },
      nextTurn: () => new Promise((resolve) => timers.setImmediate(resolve)),
      stopped: () => c.stopped,
      fatal: (e) => env.fatal(e),
      ...(env.plantedBug !== undefined ? { plantedBug: env.plantedBug } : {}),
    });
    c.kick = () => loop.kick();
    const sweep = (): void => {
      leases.expire();
      timers.setTimeout(sweep, LEASE_SWEEP_MS);
    };
    timers.setTimeout(sweep, LEASE_SWEEP_MS);
    this.p = { c, raw, timers, proposals, reads, leases, loop };
    this.status = 'up';
    this.incarnation++;
    c.kick();
  }

  /** The process dies: its timers, waiters and unsynced writes go with it. */
  crash(tick: number, status: NodeStatus = 'down'): void {
    const p = this.p;
    if (p !== undefined) {
      p.c.stopped = true;
      p.timers.dispose();
    }
    this.p = undefined;
    // Lease clocks are the process's: a restarted member runs them only once it leads again.
    this.kv.leaseDemote();
    this.disk.crash();
    this.status = status;
    this.downSince = tick;
  }

  tick(): void {
    const p = this.p;
    if (p === undefined) return;
    p.raw.tick();
    p.c.kick();
  }

  /** A message from the network, as Member's inbound handler steps it. */
  receive(m: Message): void {
    const p = this.p;
    if (p === undefined) return;
    try {
      p.raw.step(m);
    } catch (e) {
      if (!(e instanceof RaftError)) throw e;
      return;
    }
    p.c.kick();
  }

  /** A client's put, through the member's proposals; resolves once this member applied it. */
  put(key: string, value: string, lease?: string): Promise<PutResponse> | undefined {
    const p = this.p;
    if (p === undefined) return undefined;
    const req = { key: encoder.encode(key), value: encoder.encode(value), ...(lease !== undefined ? { lease } : {}) };
    return p.proposals.proposeRequest<PutResponse>({ t: 'put', id: p.c.nextReqId(), req });
  }

  /** A linearizable read: waits at the member's read barrier, then reads the applied state. */
  read(key: string): Promise<KvCell | undefined> | undefined {
    const p = this.p;
    if (p === undefined) return undefined;
    return p.reads.wait().then(() => this.kv.get(key));
  }

  /** A lease grant through the member's Leases (a fixed id: the simulation's ids come from its seed). */
  grantLease(id: string, ttl: number): Promise<{ id: string; ttl: number }> | undefined {
    return this.p?.leases.grant(id, ttl);
  }

  /** A keep-alive; only the leader answers (forwarding to it is not modelled). */
  keepAlive(id: string): Promise<{ id: string; ttl: number }> | undefined {
    const p = this.p;
    if (p === undefined || !p.c.isLeader()) return undefined;
    return p.leases.keepAlive(id);
  }

  /** The transport's report that a message to `to` could not be delivered. */
  reportUnreachable(to: NodeId): void {
    const p = this.p;
    if (p === undefined) return;
    p.raw.reportUnreachable(to);
    p.c.kick();
  }

  transferLeader(to: NodeId): void {
    const p = this.p;
    if (p === undefined) return;
    p.raw.transferLeader(to);
    p.c.kick();
  }

  /** The loop's save, with the safety checks SimCluster runs around every Ready. */
  private save(rd: Ready, timers: SimTimers): Promise<void> {
    const checker = this.env.checker;
    const live = this.disk.live;
    const prevCommit = live.getHardState().commit;
    const term = rd.hardState?.term ?? live.getHardState().term;
    checker.beforePersist(this.id, live, rd);
    const leaderBefore = checker.leaderTerm(this.id);
    const newLeader = rd.softState !== undefined && checker.onSoftState(this.id, rd.softState.raftState, term);
    const done = this.disk.save(rd, timers);
    const leaderAfter = checker.leaderTerm(this.id);
    checker.afterPersist(this.id, live, rd, prevCommit, leaderBefore !== undefined && leaderBefore === leaderAfter ? leaderBefore : undefined);
    if (newLeader) {
      checker.onNewLeader(this.id, term, live);
      this.env.onNewLeader(this.id, term);
    }
    return done;
  }

  private apply(e: Entry, applier: Applier): Promise<void> | undefined {
    // A replay after a restart: the store holds it already and the applier skips it.
    if (e.index <= this.kv.consistentIndex) return applier.applyEntry(e);
    this.kv.applyHash = mixInt(this.kv.applyHash, entryFingerprint(e));
    this.env.checker.onApply(this.id, e, this.kv.consistentIndex, this.disk.live.getHardState().commit, this.kv.applyHash);
    return applier.applyEntry(e);
  }
}
