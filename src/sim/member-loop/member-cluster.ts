// A cluster of simulated members (sim-member.ts) on one virtual clock: the network delivers their
// messages with the seed's delays, drops, duplicates and cuts; clients put and read through the members'
// own proposal and read paths; the safety checker watches every Ready, the read checker every answer,
// and every acknowledged write is checked to be durable on a quorum at the moment it is acknowledged.
import type { SeededRng } from '../../raft/rng.js';
import type { Message, NodeId } from '../../raft/types.js';
import type { PutResponse } from '../../kv/types.js';
import type { PlantedLoopBug } from '../../server/member/planted-bugs.js';
import type { NetCounters } from '../cluster.js';
import type { NemesisTarget } from '../nemesis.js';
import type { LivenessTarget, MemberView } from '../liveness.js';
import type { NodeRaftOptions } from '../sim-node.js';
import type { WorkloadTarget } from '../workload.js';
import type { DiskTiming } from './sim-disk.js';
import { decodeRequest } from '../../server/member/requests.js';
import { ClientOps, type ReadOp, type WriteOp } from '../client-ops.js';
import { SimNetwork, type NetFaults } from '../network.js';
import { ReadChecker } from '../read-checker.js';
import { SafetyChecker } from '../safety-checker.js';
import { Trace } from '../trace.js';
import { SimViolation } from '../violation.js';
import { SimScheduler } from './sim-scheduler.js';
import { SimMember, TICK_MS } from './sim-member.js';
import { LeaseClients } from './lease-clients.js';

export interface MemberClusterConfig {
  readonly voters: number;
  readonly raft: NodeRaftOptions;
  readonly net: NetFaults;
  readonly disk: DiskTiming;
  /** Simulated milliseconds per tick of network delay (the network plans delays in ticks). */
  readonly msPerDelayTick: number;
  readonly strictChecks: boolean;
  readonly traceLines: number;
  readonly plantedBug?: PlantedLoopBug;
}

export class MemberCluster implements NemesisTarget, WorkloadTarget, LivenessTarget {
  /** Ticks. */
  now = 0;
  readonly cfg: MemberClusterConfig;
  readonly nodes = new Map<NodeId, SimMember>();
  readonly net: SimNetwork;
  readonly checker: SafetyChecker;
  readonly reads = new ReadChecker();
  readonly clients = new ClientOps();
  readonly trace: Trace;
  readonly sched = new SimScheduler();
  readonly netCounters: NetCounters = { sent: 0, delivered: 0, dropped: 0, duplicated: 0 };
  readonly faultCounts = new Map<string, number>();
  /** The first violation seen, wherever it was raised (inside a member's loop, in a client's callback). */
  violation: unknown;
  readonly leases: LeaseClients;
  private readonly rng: SeededRng;
  private readonly quorum: number;

  constructor(cfg: MemberClusterConfig, rng: SeededRng) {
    this.cfg = cfg;
    this.rng = rng;
    this.net = new SimNetwork(rng, cfg.net);
    this.checker = new SafetyChecker(cfg.strictChecks);
    this.trace = new Trace(cfg.traceLines);
    this.quorum = Math.floor(cfg.voters / 2) + 1;
    this.leases = new LeaseClients(this, rng.fork());
    const voters = Array.from({ length: cfg.voters }, (_, i) => BigInt(i + 1));
    const env = {
      sched: this.sched,
      checker: this.checker,
      raft: cfg.raft,
      disk: cfg.disk,
      ...(cfg.plantedBug !== undefined ? { plantedBug: cfg.plantedBug } : {}),
      send: (from: SimMember, m: Message) => this.send(from, m),
      fatal: (e: unknown) => this.fail(e),
      onNewLeader: (id: NodeId, term: number) => this.note(`node ${id} became leader of term ${term}`),
      leaseObserver: (id: NodeId) => this.leases.observer(id),
    };
    for (const id of voters) {
      const n = new SimMember(id, voters, env, rng.fork());
      this.nodes.set(id, n);
      n.start(rng.fork());
    }
  }

  members(): SimMember[] {
    return [...this.nodes.values()].filter((n) => n.status !== 'stopped');
  }

  upNodes(): SimMember[] {
    return [...this.nodes.values()].filter((n) => n.status === 'up');
  }

  leader(): SimMember | undefined {
    let best: SimMember | undefined;
    for (const n of this.nodes.values()) {
      if (n.status !== 'up' || n.softState.raftState !== 'leader') continue;
      if (best === undefined || (n.raw?.term() ?? 0) > (best.raw?.term() ?? 0)) best = n;
    }
    return best;
  }

  leaderView(): MemberView | undefined {
    return this.leader()?.view();
  }

  memberViews(): MemberView[] {
    return this.members().map((n) => n.view());
  }

  /** One tick: what is due by its end runs in time order (deliveries, fsyncs, member timers), then every member ticks. */
  async step(): Promise<void> {
    this.now++;
    const check = (): void => this.throwIfViolated();
    await this.sched.runUntil(this.now * TICK_MS, check);
    for (const n of this.nodes.values()) if (n.status === 'up') n.tick();
    await this.sched.settle(check);
  }

  note(text: string): void {
    this.trace.note(this.now, text);
  }

  announce(text: string): void {
    this.note(text);
  }

  fault(kind: string, text: string): void {
    this.faultCounts.set(kind, (this.faultCounts.get(kind) ?? 0) + 1);
    this.note(`FAULT ${kind}: ${text}`);
  }

  propose(id: NodeId, key: string): WriteOp | undefined {
    const n = this.nodes.get(id);
    if (n?.status !== 'up') return undefined;
    const w = this.clients.newWrite(id, key, this.now);
    let answer: Promise<PutResponse> | undefined;
    try {
      answer = n.put(key, w.value);
    } catch (e) {
      // Refused before proposing (the member stopped, or apply is too far behind).
      this.clients.refused(w);
      this.note(`client: node ${id} refused put ${key}=${w.value} (${e instanceof Error ? e.message : String(e)})`);
      return undefined;
    }
    this.note(`client: put ${key}=${w.value} via node ${id}`);
    // A failed write (timeout, stopped) is indeterminate: it stays pending and sets no floor.
    // The answer is typed, but the waiter is settled by whatever entry carried its request id.
    answer?.then((r: PutResponse | undefined) => this.guard(() => this.acked(n, w, r?.header.revision)), () => undefined);
    return w;
  }

  read(id: NodeId, key: string): ReadOp | undefined {
    const n = this.nodes.get(id);
    if (n?.status !== 'up') return undefined;
    const r = this.clients.newRead(id, key, this.now, this.reads.floor(key));
    const incarnation = n.incarnation;
    this.note(`client: read r${r.id} of ${key} via node ${id} (must see index >= ${r.floor?.index ?? 0})`);
    n.read(key)?.then(
      (cell) => this.guard(() => {
        if (n.incarnation !== incarnation) return;
        const observed = cell?.index ?? 0;
        const got = cell === undefined ? 'nothing' : `${cell.value} (written at index ${observed})`;
        const err = this.reads.readDone(key, observed, r.floor, `read r${r.id} of ${key} at node ${id} returned ${got} at tick ${this.now}`);
        if (err !== undefined) {
          throw new SimViolation('linearizable-read', `read r${r.id} of ${key} via node ${id} (started tick ${r.startTick}, served tick ${this.now}, applied ${n.applied}) returned ${got}: ${err}`);
        }
      }),
      () => undefined,
    );
    return r;
  }

  proposeConfChange(): boolean {
    return false; // membership changes are not modelled here (the core-only simulation covers them)
  }

  allocateNodeId(): NodeId {
    throw new Error('sim: the member-loop simulation does not add members');
  }

  transferLeader(to: NodeId): boolean {
    const l = this.leader();
    if (l === undefined || l.id === to) return false;
    l.transferLeader(to);
    return true;
  }

  crash(id: NodeId): void {
    const n = this.nodes.get(id);
    if (n?.status !== 'up') return;
    n.crash(this.now);
    this.checker.onDown(id);
    this.announce(`node ${id} crashed (durable: last index ${n.disk.live.lastIndex()}, commit ${n.disk.live.getHardState().commit}; applied ${n.applied})`);
  }

  restart(id: NodeId): void {
    const n = this.nodes.get(id);
    if (n?.status !== 'down') return;
    n.start(this.rng.fork());
    this.announce(`node ${id} restarted`);
  }

  throwIfViolated(): void {
    if (this.violation !== undefined) throw this.violation;
  }

  /**
   * A member answered a client's put: the write must be where the answer says (the entry at that index
   * is this request's), and (strict checks) durable on a quorum of members right now, or a crash could
   * still undo it.
   */
  private acked(n: SimMember, w: WriteOp, index: number | undefined): void {
    if (index === undefined) {
      throw new SimViolation('ack-wrong-entry', `node ${n.id} answered write ${w.key}=${w.value} with no put result: another entry carrying the same request id settled it`);
    }
    const entryTerm = n.disk.live.term(index);
    const [entry] = n.disk.live.entries(index, index + 1, Number.POSITIVE_INFINITY);
    const r = entry === undefined || entry.data.length === 0 ? undefined : decodeRequest(entry.data);
    const value = r?.t === 'put' ? new TextDecoder().decode(r.req.value) : undefined;
    if (value !== w.value) {
      throw new SimViolation('ack-wrong-entry', `node ${n.id} acknowledged write ${w.key}=${w.value} as entry ${entryTerm}/${index}, which holds ${value === undefined ? 'another request' : `the put of ${value}`}`);
    }
    let durable = 0;
    for (const m of this.nodes.values()) {
      const d = m.disk.durable;
      if (index <= d.lastIndex() && d.term(index) === entryTerm) durable++;
    }
    // A strict check, like the checker's vote and commit rules: its classic consequence (a write lost
    // after a crash, seen by the read checker or as a committed entry overwritten) needs a rarer schedule.
    if (this.cfg.strictChecks && durable < this.quorum) {
      throw new SimViolation('ack-not-durable', `node ${n.id} acknowledged write ${w.key}=${w.value} (entry ${entryTerm}/${index}) at tick ${this.now} while only ${durable} of ${this.cfg.voters} members had it on disk`);
    }
    this.clients.ackIfProposer(w.node, { op: 'put', key: w.key, value: w.value, id: w.id });
    this.reads.writeAcked(w.key, index, `write ${w.key}=${w.value} (index ${index}) was acknowledged by node ${n.id} at tick ${this.now}`);
  }

  /** Runs a client's callback; what it throws is the run's violation. */
  guard(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.fail(e);
    }
  }

  private fail(e: unknown): void {
    this.violation ??= e;
  }

  private send(from: SimMember, m: Message): void {
    this.netCounters.sent++;
    const delays = this.net.plan();
    if (delays.length === 0) {
      this.netCounters.dropped++;
      this.trace.message(this.now, 'drop', m);
      return;
    }
    if (delays.length > 1) this.netCounters.duplicated++;
    const incarnation = from.incarnation;
    for (const d of delays) this.sched.at(this.sched.now + d * this.cfg.msPerDelayTick, () => this.deliver(from, incarnation, m));
  }

  private deliver(from: SimMember, incarnation: number, m: Message): void {
    const to = this.nodes.get(m.to);
    const fate = to?.status !== 'up' ? 'down' : this.net.isCut(m.from, m.to) ? 'cut' : 'deliver';
    this.trace.message(this.now, fate, m);
    if (fate !== 'deliver' || to === undefined) {
      this.netCounters.dropped++;
      if (m.type === 'app' && from.status === 'up' && from.incarnation === incarnation) from.reportUnreachable(m.to);
      return;
    }
    this.netCounters.delivered++;
    to.receive(m);
  }
}
