// RawNode: the application's handle on the core. It turns the state machine's buffered output into Ready
// batches and takes the application's acknowledgement (advance) that a batch was persisted and applied.
import type { ConfChange, ConfState, Entry, HardState, Message, NodeId, Ready, SoftState } from './types.js';
import type { RaftConfig } from './raft.js';
import type { ProgressState } from './progress.js';
import { Raft } from './raft.js';
import { RaftError, invariant } from './errors.js';
import { NONE, encodeConfChange, hardStateEqual, msg } from './types.js';

export type { RaftConfig, PlantedBugs } from './raft.js';

export interface ProgressStatus {
  readonly match: number;
  readonly next: number;
  readonly state: ProgressState;
  readonly isLearner: boolean;
  readonly recentActive: boolean;
}

export interface RaftStatus {
  readonly id: NodeId;
  readonly hardState: HardState;
  readonly softState: SoftState;
  readonly applied: number;
  readonly lastIndex: number;
  readonly firstIndex: number;
  readonly leadTransferee: NodeId;
  readonly config: ConfState;
  /** Only on the leader. */
  readonly progress: ReadonlyMap<NodeId, ProgressStatus>;
}

interface Outstanding {
  readonly lastEntry?: { index: number; term: number };
  readonly snapIndex?: number;
  readonly appliedTo?: number;
  readonly committedEntries: readonly Entry[];
}

export class RawNode {
  readonly raft: Raft;
  private prevSoftState: SoftState;
  private prevHardState: HardState;
  /** The Ready handed out and not yet advanced. Only one may be outstanding. */
  private outstanding: Outstanding | undefined;

  constructor(cfg: RaftConfig) {
    this.raft = new Raft(cfg);
    this.prevSoftState = this.raft.softState();
    this.prevHardState = this.raft.hardState();
  }

  get id(): NodeId {
    return this.raft.id;
  }

  tick(): void {
    this.raft.tick();
  }

  // Status questions the application asks on its hot paths, without building a whole status() (etcd-io/raft's
  // Status and BasicStatus): the application never reads the core's log or fields directly.

  /** The highest index the application has applied (advanced past). Invariant: applied <= committed. */
  applied(): number {
    return this.raft.raftLog.applied;
  }

  /** The highest index known to be committed. */
  committed(): number {
    return this.raft.raftLog.committed;
  }

  term(): number {
    return this.raft.term;
  }

  lead(): NodeId {
    return this.raft.lead;
  }

  isLearner(): boolean {
    return this.raft.isLearner;
  }

  /** True once this follower no longer honours a leader's lease (it would grant a vote). */
  /** True while campaigning (pre-vote or vote) without having won. */
  campaigning(): boolean {
    return this.raft.campaigning();
  }

  leaseEnded(): boolean {
    return this.raft.leaseEnded();
  }

  confState(): ConfState {
    return this.raft.confState();
  }

  /** Starts an election now (a pre-election first if pre-vote is on). */
  campaign(): void {
    this.raft.step(msg({ type: 'hup', from: this.raft.id }));
  }

  /** Proposes data. Throws RaftError RAFT_PROPOSAL_DROPPED (with a leader hint) when it cannot be taken. */
  propose(data: Uint8Array): void {
    this.raft.step(msg({ type: 'prop', from: this.raft.id, entries: [{ term: 0, index: 0, type: 'normal', data }] }));
  }

  /**
   * Proposes many entries in one step: one log append and one message per follower for the whole batch.
   * The server batches client writes this way.
   */
  proposeBatch(datas: readonly Uint8Array[]): void {
    if (datas.length === 0) return;
    this.raft.step(msg({ type: 'prop', from: this.raft.id, entries: datas.map((data) => ({ term: 0, index: 0, type: 'normal' as const, data })) }));
  }

  /** Proposes a membership change; at most one may be uncommitted (unapplied) at a time. */
  proposeConfChange(cc: ConfChange): void {
    this.raft.step(msg({ type: 'prop', from: this.raft.id, entries: [{ term: 0, index: 0, type: 'confChange', data: encodeConfChange(cc) }] }));
  }

  /** Steps a message received from a peer. */
  step(m: Message): void {
    Raft.checkStepAllowed(m, this.raft.trk.progress.has(m.from) || this.raft.state !== 'leader');
    try {
      this.raft.step(m);
    } catch (e) {
      // A proposal arriving over the network was forwarded, even one that started here and bounced back
      // through a follower (its `from` is then our own id): like any forwarded proposal, it is dropped
      // silently rather than thrown at the transport.
      if (m.type === 'prop' && e instanceof RaftError && e.code === 'RAFT_PROPOSAL_DROPPED') return;
      throw e;
    }
  }

  /**
   * Requests a linearizable read. `ctx` must be unique and non-empty; the read is safe to serve once a
   * ReadState with the same ctx appears in a Ready and the application has applied up to its index.
   */
  readIndex(ctx: Uint8Array): void {
    if (ctx.length === 0) throw new RaftError('RAFT_INVARIANT', 'raft: read index context must not be empty');
    this.raft.step(msg({ type: 'readIndex', from: this.raft.id, context: ctx }));
  }

  /**
   * Takes the proposals and read requests a follower forwards to its leader out of the pending messages,
   * to be sent now rather than with the next Ready. They carry none of this member's state, so they need
   * not wait for a write to the log; a follower busy persisting and applying one Ready would otherwise
   * hold them until it has finished.
   */
  takeForwards(): Message[] {
    const r = this.raft;
    if (r.state === 'leader' || r.lead === NONE || r.msgs.length === 0) return [];
    let out: Message[] | undefined;
    const keep: Message[] = [];
    for (const m of r.msgs) {
      if ((m.type === 'prop' || m.type === 'readIndex') && m.to === r.lead) (out ??= []).push(m);
      else keep.push(m);
    }
    if (!out) return [];
    r.msgs = keep;
    return out;
  }

  /**
   * Takes the heartbeats (a leader's) and heartbeat responses (a follower's) out of the pending messages,
   * to be sent while the application is still busy with the previous Ready (applying a delete of 500,000
   * keys, in slices). Neither claims anything about this member's log, so neither waits for a write; but
   * both carry the current term, so they are handed out only while it is the term `savedTerm` already on
   * disk (a term learnt since must be persisted first, as with votes).
   */
  takeHeartbeats(savedTerm: number): Message[] {
    const r = this.raft;
    if (r.term !== savedTerm || r.msgs.length === 0) return [];
    let out: Message[] | undefined;
    const keep: Message[] = [];
    for (const m of r.msgs) {
      if (m.type === 'heartbeat' || m.type === 'heartbeatResp') (out ??= []).push(m);
      else keep.push(m);
    }
    if (!out) return [];
    r.msgs = keep;
    return out;
  }

  /** Asks the leader to hand leadership to `to`. */
  transferLeader(to: NodeId): void {
    this.raft.step(msg({ type: 'transferLeader', from: to, to: this.raft.lead }));
  }

  reportUnreachable(id: NodeId): void {
    this.raft.step(msg({ type: 'unreachable', from: id }));
  }

  /** The connection to `id` dropped; true when it was our leader and we should campaign soon (Raft.leaderConnectionLost). */
  leaderConnectionLost(id: NodeId): boolean {
    return this.raft.leaderConnectionLost(id);
  }

  reportSnapshot(id: NodeId, ok: boolean): void {
    this.raft.step(msg({ type: 'snapStatus', from: id, reject: !ok }));
  }

  applyConfChange(cc: ConfChange): ConfState {
    return this.raft.applyConfChange(cc);
  }

  hasReady(): boolean {
    if (this.outstanding) return false;
    const r = this.raft;
    const ss = r.softState();
    if (ss.lead !== this.prevSoftState.lead || ss.raftState !== this.prevSoftState.raftState) return true;
    const hs = r.hardState();
    if (!hardStateEqual(hs, this.prevHardState)) return true;
    if (r.raftLog.unstable.nextSnapshot()) return true;
    return r.msgs.length > 0 || r.raftLog.hasNextUnstableEnts() || r.raftLog.hasNextCommittedEnts() || r.readStates.length > 0;
  }

  ready(): Ready {
    invariant(this.outstanding === undefined, 'ready() called again before advance()');
    const r = this.raft;
    const entries = r.raftLog.nextUnstableEnts();
    const snapshot = r.raftLog.unstable.nextSnapshot();
    const committedEntries = r.raftLog.nextCommittedEnts();
    const ss = r.softState();
    const hs = r.hardState();
    const softChanged = ss.lead !== this.prevSoftState.lead || ss.raftState !== this.prevSoftState.raftState;
    const hardChanged = !hardStateEqual(hs, this.prevHardState);
    // Term and vote must be durable before any message that relies on them leaves; so must entries.
    const mustSync =
      entries.length > 0 ||
      // A follower acknowledges an installed snapshot in this same Ready; losing it after the leader has
      // counted it as matched would stall replication to this member for good.
      snapshot !== undefined ||
      hs.term !== this.prevHardState.term ||
      hs.vote !== this.prevHardState.vote;
    const rd: Ready = {
      ...(softChanged ? { softState: ss } : {}),
      ...(hardChanged ? { hardState: hs } : {}),
      ...(snapshot ? { snapshot } : {}),
      readStates: r.readStates,
      entries,
      committedEntries,
      messages: r.msgs,
      mustSync,
    };
    r.msgs = [];
    r.readStates = [];
    r.raftLog.unstable.acceptInProgress();
    const lastCommitted = committedEntries[committedEntries.length - 1];
    if (lastCommitted) r.raftLog.acceptApplying(lastCommitted.index);
    if (softChanged) this.prevSoftState = ss;
    if (hardChanged) this.prevHardState = hs;
    const lastEntry = entries[entries.length - 1];
    this.outstanding = {
      ...(lastEntry ? { lastEntry: { index: lastEntry.index, term: lastEntry.term } } : {}),
      ...(snapshot ? { snapIndex: snapshot.metadata.index } : {}),
      ...(lastCommitted ? { appliedTo: lastCommitted.index } : {}),
      committedEntries,
    };
    return rd;
  }

  /** The last Ready was persisted, sent and applied. */
  advance(): void {
    const o = this.outstanding;
    invariant(o !== undefined, 'advance() without ready()');
    this.outstanding = undefined;
    const log = this.raft.raftLog;
    if (o.snapIndex !== undefined) {
      log.unstable.stableSnapTo(o.snapIndex);
      log.appliedTo(o.snapIndex);
    }
    if (o.lastEntry) log.unstable.stableTo(o.lastEntry.index, o.lastEntry.term);
    if (o.appliedTo !== undefined) {
      log.appliedTo(o.appliedTo);
      this.raft.reduceUncommittedSize(o.committedEntries);
    }
    this.raft.onPersisted();
  }

  status(): RaftStatus {
    const r = this.raft;
    const progress = new Map<NodeId, ProgressStatus>();
    if (r.state === 'leader') {
      for (const id of r.trk.ids()) {
        const pr = r.trk.progress.get(id);
        if (pr) progress.set(id, { match: pr.match, next: pr.next, state: pr.state, isLearner: pr.isLearner, recentActive: pr.recentActive });
      }
    }
    return {
      id: r.id,
      hardState: r.hardState(),
      softState: r.softState(),
      applied: r.raftLog.applied,
      lastIndex: r.raftLog.lastIndex(),
      firstIndex: r.raftLog.firstIndex(),
      leadTransferee: r.leadTransferee,
      config: r.confState(),
      progress,
    };
  }
}
