// A whole simulated cluster in one process: members, the network, simulated time, client operations,
// and every Ready handled the way a careful application would (persist, send, apply, advance), with the
// safety checker watching each step. Faults and traffic are driven from outside (Nemesis, Workload, or
// the live `setpoint up` demo) through the public methods.
import type { SeededRng } from '../raft/rng.js';
import { RaftError } from '../raft/errors.js';
import type { RawNode } from '../raft/raw-node.js';
import { bootstrapStorage, MemoryStorage } from '../raft/storage.js';
import type { ConfChange, Entry, Message, NodeId, Ready } from '../raft/types.js';
import { decodeConfChange } from '../raft/types.js';
import { ClientOps, decodeReadCtx, encodeReadCtx, type ReadOp, type WriteOp } from './client-ops.js';
import { EventQueue } from './event-queue.js';
import { encodePut, type KvCell } from './kv-machine.js';
import { SimNetwork, type NetFaults } from './network.js';
import { ReadChecker } from './read-checker.js';
import { SafetyChecker } from './safety-checker.js';
import { nodeView, SimNode, type NodeRaftOptions } from './sim-node.js';
import type { MemberView } from './liveness.js';
import { Trace, type MessageFate } from './trace.js';
import { SimViolation } from './violation.js';

export interface ClusterConfig {
  /** Initial voters, ids idBase+1..idBase+voters. Members added later get fresh ids. */
  readonly voters: number;
  /**
   * Added to every node id (default 0n: ids 1, 2, 3…). Near 2^64, ids that a Number would round to one
   * value (2^64-255 and 2^64-254 do) check that the core carries 64-bit ids without loss.
   */
  readonly idBase?: bigint;
  readonly raft: NodeRaftOptions;
  readonly net: NetFaults;
  /** Applied entries between snapshots (0: never compact). Small values exercise snapshot sends. */
  readonly snapshotEvery: number;
  /** Entries kept behind a snapshot, so slightly lagging followers still catch up from the log. */
  readonly keepEntries: number;
  readonly strictChecks: boolean;
  readonly traceLines: number;
}

export type ClusterEvent =
  | { readonly type: 'leader'; readonly node: NodeId; readonly term: number }
  | { readonly type: 'ack'; readonly write: WriteOp; readonly index: number }
  | { readonly type: 'read'; readonly read: ReadOp; readonly cell: KvCell | undefined }
  | { readonly type: 'member'; readonly text: string }
  | { readonly type: 'info'; readonly text: string }
  | { readonly type: 'fault'; readonly kind: string; readonly text: string };

type Queued =
  | { readonly kind: 'msg'; readonly m: Message; readonly fromIncarnation: number }
  | { readonly kind: 'snapStatus'; readonly from: NodeId; readonly to: NodeId; readonly incarnation: number };

export interface NetCounters {
  sent: number;
  delivered: number;
  dropped: number;
  duplicated: number;
}

export class SimCluster {
  now = 0;
  readonly cfg: ClusterConfig;
  readonly nodes = new Map<NodeId, SimNode>();
  readonly net: SimNetwork;
  readonly checker: SafetyChecker;
  readonly reads = new ReadChecker();
  readonly clients = new ClientOps();
  readonly trace: Trace;
  readonly netCounters: NetCounters = { sent: 0, delivered: 0, dropped: 0, duplicated: 0 };
  readonly faultCounts = new Map<string, number>();
  /** Sees elections, acknowledged writes, reads, membership changes and faults as they happen. */
  listener: ((e: ClusterEvent) => void) | undefined;

  private readonly queue = new EventQueue<Queued>();
  private readonly rng: SeededRng;
  private nextNodeId: NodeId;
  private lastConfIndexNoted = 0;

  constructor(cfg: ClusterConfig, rng: SeededRng) {
    this.cfg = cfg;
    this.rng = rng;
    this.net = new SimNetwork(rng, cfg.net);
    this.checker = new SafetyChecker(cfg.strictChecks);
    this.trace = new Trace(cfg.traceLines);
    const base = cfg.idBase ?? 0n;
    const voters = Array.from({ length: cfg.voters }, (_, i) => base + BigInt(i + 1));
    this.nextNodeId = base + BigInt(cfg.voters + 1);
    for (const id of voters) this.startNode(new SimNode(id, bootstrapStorage(voters)));
  }

  /** A fresh id for a member to be added; ids are never reused, as in etcd. */
  allocateNodeId(): NodeId {
    return this.nextNodeId++;
  }

  /** Members that exist and were not removed (up or crashed). */
  members(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.status !== 'stopped');
  }

  upNodes(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.status === 'up');
  }

  /** The running node that believes it leads the highest term. */
  leader(): SimNode | undefined {
    let best: SimNode | undefined;
    for (const n of this.nodes.values()) {
      if (n.status === 'up' && n.raftState === 'leader' && (best === undefined || n.term > best.term)) best = n;
    }
    return best;
  }

  leaderView(): MemberView | undefined {
    const l = this.leader();
    return l === undefined ? undefined : nodeView(l);
  }

  memberViews(): MemberView[] {
    return this.members().map(nodeView);
  }

  /** One tick of simulated time: every running node ticks, then the messages due by now arrive. */
  step(): void {
    this.now++;
    for (const n of this.nodes.values()) {
      if (n.status !== 'up') continue;
      (n.raw as RawNode).tick();
      this.drain(n);
    }
    while (this.queue.nextAt() <= this.now) this.dispatch(this.queue.pop() as Queued);
  }

  note(text: string): void {
    this.trace.note(this.now, text);
  }

  /** A note worth showing beyond the trace: nodes going down and coming back, the network healing. */
  announce(text: string): void {
    this.note(text);
    this.listener?.({ type: 'info', text });
  }

  /** Records an injected fault: counted by kind, traced, and shown to the listener. */
  fault(kind: string, text: string): void {
    this.faultCounts.set(kind, (this.faultCounts.get(kind) ?? 0) + 1);
    this.note(`FAULT ${kind}: ${text}`);
    this.listener?.({ type: 'fault', kind, text });
  }

  propose(id: NodeId, key: string): WriteOp | undefined {
    const n = this.nodes.get(id);
    if (n?.status !== 'up') return undefined;
    const w = this.clients.newWrite(id, key, this.now);
    try {
      (n.raw as RawNode).propose(encodePut({ op: 'put', key, value: w.value, id: w.id }));
    } catch (e) {
      if (!isRaftError(e, 'RAFT_PROPOSAL_DROPPED')) throw e;
      this.clients.refused(w);
      this.note(`client: node ${id} refused put ${key}=${w.value} (${e.message})`);
      return undefined;
    }
    this.note(`client: put ${key}=${w.value} via node ${id}`);
    this.drain(n);
    return w;
  }

  read(id: NodeId, key: string): ReadOp | undefined {
    const n = this.nodes.get(id);
    if (n?.status !== 'up') return undefined;
    const r = this.clients.newRead(id, key, this.now, this.reads.floor(key));
    n.reads.set(r.id, r);
    try {
      (n.raw as RawNode).readIndex(encodeReadCtx(r.id));
    } catch (e) {
      if (!isRaftError(e, 'RAFT_PROPOSAL_DROPPED')) throw e;
      n.reads.delete(r.id);
      return undefined;
    }
    this.note(`client: read r${r.id} of ${key} via node ${id} (must see index >= ${r.floor?.index ?? 0})`);
    this.drain(n);
    return r;
  }

  /** Proposes a membership change through the current leader. False when there is none or it refused. */
  proposeConfChange(cc: ConfChange): boolean {
    const l = this.leader();
    if (l === undefined) return false;
    try {
      (l.raw as RawNode).proposeConfChange(cc);
    } catch (e) {
      if (!isRaftError(e, 'RAFT_PROPOSAL_DROPPED')) throw e;
      return false;
    }
    this.note(`admin: propose ${cc.type}(${cc.nodeId}) via leader ${l.id}`);
    this.drain(l);
    return true;
  }

  transferLeader(to: NodeId): boolean {
    const l = this.leader();
    if (l === undefined || l.id === to) return false;
    (l.raw as RawNode).transferLeader(to);
    this.drain(l);
    return true;
  }

  /** Kills a node. `torn`: it dies in the middle of its next Ready, which is then (mostly) lost. */
  crash(id: NodeId, torn: boolean): void {
    const n = this.nodes.get(id);
    if (n?.status !== 'up') return;
    if (torn) n.tornNext = true;
    else this.kill(n, 'crashed');
  }

  restart(id: NodeId): void {
    const n = this.nodes.get(id);
    if (n?.status !== 'down') return;
    this.startNode(n);
    this.announce(`node ${id} restarted (term ${n.term}, commit ${n.storage.getHardState().commit}, applied ${n.applied}, last index ${n.storage.lastIndex()})`);
    this.drain(n);
  }

  private startNode(n: SimNode): void {
    this.nodes.set(n.id, n);
    n.start(this.cfg.raft, this.rng.fork());
  }

  private kill(n: SimNode, how: string): void {
    n.crash(this.now);
    this.checker.onDown(n.id);
    this.announce(`node ${n.id} ${how}`);
  }

  private drain(n: SimNode): void {
    const raw = n.raw;
    if (raw === undefined) return;
    while (n.status === 'up' && raw.hasReady()) this.handleReady(n, raw, raw.ready());
  }

  private handleReady(n: SimNode, raw: RawNode, rd: Ready): void {
    const st = n.storage;
    const prevHs = st.getHardState();
    const prevCommit = prevHs.commit;
    const term = rd.hardState?.term ?? n.term;
    this.checker.beforePersist(n.id, st, rd);
    const leaderBefore = this.checker.leaderTerm(n.id);
    let newLeader = false;
    if (rd.softState) {
      newLeader = this.checker.onSoftState(n.id, rd.softState.raftState, term);
      n.lead = rd.softState.lead;
      n.raftState = rd.softState.raftState;
      if (newLeader) {
        this.note(`node ${n.id} became leader of term ${term}`);
        this.listener?.({ type: 'leader', node: n.id, term });
      }
    }
    if (n.tornNext) {
      this.tornCrash(n, rd);
      return;
    }
    if (rd.hardState && (rd.hardState.term !== prevHs.term || rd.hardState.vote !== prevHs.vote)) {
      this.note(`node ${n.id} hard state: term ${rd.hardState.term}, vote ${rd.hardState.vote || 'none'}`);
    }
    if (rd.snapshot) {
      st.applySnapshot(rd.snapshot);
      n.restore(rd.snapshot);
      this.checker.onRestore(n.id, n.applied, n.kv.applyHash);
      this.note(`node ${n.id} installed snapshot ${rd.snapshot.metadata.term}/${rd.snapshot.metadata.index}`);
    }
    st.append(rd.entries);
    if (rd.hardState) st.setHardState(rd.hardState);
    const leaderAfter = this.checker.leaderTerm(n.id);
    this.checker.afterPersist(n.id, st, rd, prevCommit, leaderBefore !== undefined && leaderBefore === leaderAfter ? leaderBefore : undefined);
    if (newLeader) this.checker.onNewLeader(n.id, term, st);
    for (const m of rd.messages) this.send(n, m);
    for (const rs of rd.readStates) {
      const id = decodeReadCtx(rs.requestCtx);
      const r = id === undefined ? undefined : n.reads.get(id);
      if (r !== undefined) r.index = rs.index;
    }
    const memberAdded = this.applyCommitted(n, raw, rd.committedEntries);
    if (rd.readStates.length > 0 || rd.committedEntries.length > 0 || rd.snapshot) this.serveReads(n);
    this.maybeSnapshot(n, memberAdded);
    raw.advance();
    if (n.stopAfterReady) this.stopNode(n);
  }

  /** The process dies while writing a Ready: a prefix of its entries may be on disk, nothing else is. */
  private tornCrash(n: SimNode, rd: Ready): void {
    const keep = rd.snapshot ? 0 : this.rng.int(rd.entries.length + 1);
    if (keep > 0) {
      const ents = rd.entries.slice(0, keep);
      n.storage.append(ents);
      this.checker.onEntriesPersisted(n.id, n.storage, ents);
    }
    this.kill(n, `crashed mid-Ready (${keep}/${rd.entries.length} entries reached the disk, hard state and ${rd.messages.length} messages lost)`);
  }

  /** Applies committed entries; returns whether one of them added a member. */
  private applyCommitted(n: SimNode, raw: RawNode, ents: readonly Entry[]): boolean {
    const commit = n.storage.getHardState().commit;
    let memberAdded = false;
    for (const e of ents) {
      const prev = n.applied;
      const op = n.kv.apply(e);
      this.checker.onApply(n.id, e, prev, commit, n.kv.applyHash);
      n.applied = e.index;
      if (e.type === 'confChange') {
        const cc = decodeConfChange(e.data);
        n.confState = raw.applyConfChange(cc);
        // Persisted with `applied`: a restart past the snapshot does not replay this conf change.
        n.storage.setConfState(n.confState);
        this.onConfChangeApplied(n, e.index, cc);
        memberAdded ||= cc.type !== 'removeNode';
      } else if (op !== undefined) {
        const w = this.clients.ackIfProposer(n.id, op);
        if (w !== undefined) {
          this.reads.writeAcked(w.key, e.index, `write ${w.key}=${w.value} (index ${e.index}) was acknowledged by node ${n.id} at tick ${this.now}`);
          this.listener?.({ type: 'ack', write: w, index: e.index });
        }
      }
    }
    return memberAdded;
  }

  /** Membership as an operator would run it: start a member once it is added, stop it once removed. */
  private onConfChangeApplied(n: SimNode, index: number, cc: ConfChange): void {
    const first = index > this.lastConfIndexNoted;
    if (first) {
      this.lastConfIndexNoted = index;
      const text = `${cc.type}(${cc.nodeId}) applied at index ${index} (config now voters=[${n.confState.voters.join(',')}] learners=[${n.confState.learners.join(',')}])`;
      this.note(text);
      this.listener?.({ type: 'member', text });
    }
    const target = this.nodes.get(cc.nodeId);
    if (cc.type === 'removeNode') {
      if (target === n) n.stopAfterReady = true;
      else if (target !== undefined && target.status !== 'stopped') this.stopNode(target);
    } else if (target === undefined) {
      const fresh = new SimNode(cc.nodeId, new MemoryStorage());
      this.startNode(fresh);
      this.announce(`node ${cc.nodeId} started (empty, joining)`);
    }
  }

  private stopNode(n: SimNode): void {
    n.stop(this.now);
    this.checker.onDown(n.id);
    this.announce(`node ${n.id} stopped (removed from the cluster)`);
  }

  private serveReads(n: SimNode): void {
    for (const [id, r] of n.reads) {
      if (r.index === undefined || r.index > n.applied) continue;
      n.reads.delete(id);
      const cell = n.kv.get(r.key);
      const observed = cell?.index ?? 0;
      const got = cell === undefined ? 'nothing' : `${cell.value} (written at index ${observed})`;
      const err = this.reads.readDone(r.key, observed, r.floor, `read r${id} of ${r.key} at node ${n.id} returned ${got} at tick ${this.now}`);
      if (err !== undefined) {
        throw new SimViolation('linearizable-read', `read r${id} of ${r.key} via node ${n.id} (started tick ${r.startTick}, read index ${r.index}, served tick ${this.now}) returned ${got}: ${err}`);
      }
      this.listener?.({ type: 'read', read: r, cell });
    }
  }

  /**
   * Snapshots the applied state every `snapshotEvery` entries (then compacts the log), and whenever a
   * member was added: a joining node's log is empty, so it starts from the leader's snapshot, and
   * rejects one whose configuration does not include it yet (as etcd's does).
   */
  private maybeSnapshot(n: SimNode, memberAdded: boolean): void {
    const every = this.cfg.snapshotEvery;
    const st = n.storage;
    const due = every > 0 && n.applied - st.snapshot().metadata.index >= every;
    if (!due && !memberAdded) return;
    if (n.applied > st.snapshot().metadata.index) st.createSnapshot(n.applied, n.confState, n.kv.encode());
    const upTo = n.applied - this.cfg.keepEntries;
    if (due && upTo >= st.firstIndex()) st.compact(upTo);
  }

  private send(from: SimNode, m: Message): void {
    this.netCounters.sent++;
    const delays = this.net.plan();
    if (delays.length === 0) {
      this.netCounters.dropped++;
      this.trace.message(this.now, 'drop', m);
      // A lost snapshot is reported back by the transport, as etcd's does, or its progress stays stuck.
      if (m.type === 'snap') this.queue.push(this.now + 1, { kind: 'snapStatus', from: from.id, to: m.to, incarnation: from.incarnation });
      return;
    }
    if (delays.length > 1) this.netCounters.duplicated++;
    for (const d of delays) this.queue.push(this.now + d, { kind: 'msg', m, fromIncarnation: from.incarnation });
  }

  private dispatch(q: Queued): void {
    if (q.kind === 'snapStatus') {
      this.reportToSender(q.from, q.incarnation, (raw) => raw.reportSnapshot(q.to, false));
      return;
    }
    const m = q.m;
    const to = this.nodes.get(m.to);
    let fate: MessageFate = 'deliver';
    if (to?.status !== 'up') fate = 'down';
    else if (this.net.isCut(m.from, m.to)) fate = 'cut';
    this.trace.message(this.now, fate, m);
    if (fate !== 'deliver' || to === undefined) {
      this.netCounters.dropped++;
      if (m.type === 'snap') this.reportToSender(m.from, q.fromIncarnation, (raw) => raw.reportSnapshot(m.to, false));
      else if (m.type === 'app') this.reportToSender(m.from, q.fromIncarnation, (raw) => raw.reportUnreachable(m.to));
      return;
    }
    this.netCounters.delivered++;
    try {
      (to.raw as RawNode).step(m);
    } catch (e) {
      // A response from a member that was removed meanwhile: etcd drops these too.
      if (isRaftError(e, 'RAFT_STEP_PEER_NOT_FOUND')) return;
      throw e;
    }
    this.drain(to);
    if (m.type === 'snap') this.reportToSender(m.from, q.fromIncarnation, (raw) => raw.reportSnapshot(m.to, true));
  }

  /** Transport feedback reaches the sender only if it is the same process that sent. */
  private reportToSender(from: NodeId, incarnation: number, report: (raw: RawNode) => void): void {
    const s = this.nodes.get(from);
    if (s?.status !== 'up' || s.incarnation !== incarnation) return;
    report(s.raw as RawNode);
    this.drain(s);
  }
}

export function isRaftError(e: unknown, code: RaftError['code']): e is RaftError {
  return e instanceof RaftError && e.code === code;
}
