// The Raft state machine. Term rules live in one place (step); each role has its own step function and
// tick function, swapped by becomeX(). Outputs are only buffered (msgs, readStates); RawNode hands them
// to the application in a Ready. Modelled on etcd-io/raft; written from the paper and its feature list.
import type { ConfChange, ConfState, Entry, HardState, Message, MessageType, NodeId, ReadState, SoftState, StateType } from './types.js';
import type { Storage } from './storage.js';
import type { Rng } from './rng.js';
import { NONE, decodeConfChange, isLocalMessage, isResponseMessage, msg, voteRespType } from './types.js';
import { RaftError, errProposalDropped, invariant } from './errors.js';
import { RaftLog } from './raft-log.js';
import { Progress, ProgressTracker } from './progress.js';
import { ReadOnly, ctxKey } from './read-only.js';

/** TEST ONLY. Each flag plants a known bug so the simulation can prove it catches it. */
export interface PlantedBugs {
  /** A node grants its vote to a second candidate in the same term. */
  readonly voteTwice?: boolean;
  /** A leader commits an entry from an earlier term once a quorum holds it (Raft paper, Figure 8). */
  readonly commitPreviousTermByCounting?: boolean;
  /** A leader answers ReadIndex at once, without confirming leadership with a quorum. */
  readonly readWithoutQuorum?: boolean;
}

export interface RaftConfig {
  readonly id: NodeId;
  /** Ticks a follower waits without hearing from a leader before campaigning (randomized in [E, 2E)). */
  readonly electionTick: number;
  /** Ticks between a leader's heartbeats. Must be < electionTick. */
  readonly heartbeatTick: number;
  readonly storage: Storage;
  readonly rng: Rng;
  /** Last applied index when restarting; entries up to it are not handed out again. */
  readonly applied?: number;
  readonly maxSizePerMsg?: number;
  readonly maxInflightMsgs?: number;
  readonly maxInflightBytes?: number;
  /** Proposals are dropped while the uncommitted tail's payload exceeds this (0 = unlimited). */
  readonly maxUncommittedEntriesSize?: number;
  readonly maxCommittedSizePerReady?: number;
  readonly checkQuorum?: boolean;
  readonly preVote?: boolean;
  readonly disableProposalForwarding?: boolean;
  readonly bugs?: PlantedBugs;
}

type CampaignType = 'preElection' | 'election' | 'transfer';

/** Context on vote requests caused by a leader transfer: voters skip their leader-lease check. */
const TRANSFER_CTX = new Uint8Array([0x74, 0x72, 0x61, 0x6e, 0x73, 0x66, 0x65, 0x72]); // "transfer"

function isTransferCtx(ctx: Uint8Array | undefined): boolean {
  return ctx !== undefined && ctxKey(ctx) === ctxKey(TRANSFER_CTX);
}

export class Raft {
  readonly id: NodeId;
  term = 0;
  vote: NodeId = NONE;
  lead: NodeId = NONE;
  state: StateType = 'follower';
  isLearner = false;

  readonly raftLog: RaftLog;
  readonly trk: ProgressTracker;

  /** Outgoing messages since the last Ready. */
  msgs: Message[] = [];
  /** Completed linearizable reads since the last Ready. */
  readStates: ReadState[] = [];

  /** Leader transfer target (NONE when no transfer runs). */
  leadTransferee: NodeId = NONE;
  /** Index of the latest conf change the leader appended; a new one waits until it is applied. */
  pendingConfIndex = 0;
  /** Payload bytes appended by this leader and not yet committed/applied. */
  uncommittedSize = 0;

  private readOnly = new ReadOnly();
  /** ReadIndex requests held until the leader commits an entry in its own term. */
  private pendingReadIndexMessages: Message[] = [];

  /** Ticks since the last election timeout reset (follower/candidate) or quorum check (leader). */
  electionElapsed = 0;
  private heartbeatElapsed = 0;
  randomizedElectionTimeout = 0;

  readonly electionTimeout: number;
  readonly heartbeatTimeout: number;
  readonly checkQuorum: boolean;
  readonly preVote: boolean;
  readonly disableProposalForwarding: boolean;
  private readonly maxMsgSize: number;
  private readonly maxUncommittedSize: number;
  private readonly rng: Rng;
  private readonly bugs: PlantedBugs;

  private stepFn: (m: Message) => void;
  private tickFn: () => void;

  constructor(c: RaftConfig) {
    invariant(c.id !== NONE, 'cannot use none as id');
    invariant(c.heartbeatTick > 0, 'heartbeat tick must be greater than 0');
    invariant(c.electionTick > c.heartbeatTick, 'election tick must be greater than heartbeat tick');
    this.id = c.id;
    this.electionTimeout = c.electionTick;
    this.heartbeatTimeout = c.heartbeatTick;
    this.checkQuorum = c.checkQuorum ?? false;
    this.preVote = c.preVote ?? false;
    this.disableProposalForwarding = c.disableProposalForwarding ?? false;
    this.maxMsgSize = c.maxSizePerMsg ?? 1024 * 1024;
    this.maxUncommittedSize = c.maxUncommittedEntriesSize ?? 0;
    this.rng = c.rng;
    this.bugs = c.bugs ?? {};
    this.raftLog = new RaftLog(c.storage, c.maxCommittedSizePerReady ?? 64 * 1024 * 1024);
    this.trk = new ProgressTracker(c.maxInflightMsgs ?? 256, c.maxInflightBytes ?? 0);

    const { hardState, confState } = c.storage.initialState();
    this.applyConfState(confState);
    if (hardState.term !== 0 || hardState.vote !== NONE || hardState.commit !== 0) this.loadState(hardState);
    if (c.applied !== undefined && c.applied > 0) this.raftLog.appliedTo(c.applied);

    this.stepFn = this.stepFollower;
    this.tickFn = this.tickElection;
    this.becomeFollower(this.term, NONE);
  }

  // ---- state snapshots for Ready ----

  softState(): SoftState {
    return { lead: this.lead, raftState: this.state };
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.raftLog.committed };
  }

  private loadState(hs: HardState): void {
    const last = this.raftLog.lastIndex();
    invariant(hs.commit >= this.raftLog.committed && hs.commit <= last, `hs.commit ${hs.commit} is out of range [${this.raftLog.committed}, ${last}]`);
    this.raftLog.committed = hs.commit;
    this.term = hs.term;
    this.vote = hs.vote;
  }

  // ---- sending ----

  private send(m: Message): void {
    let term = m.term;
    if (m.type === 'vote' || m.type === 'voteResp' || m.type === 'preVote' || m.type === 'preVoteResp') {
      // Vote messages carry an explicit term: the candidate's (pre-)term, or the term a vote is granted in.
      invariant(m.term !== 0, `term should be set when sending ${m.type}`);
    } else {
      invariant(m.term === 0, `term should not be set when sending ${m.type} (was ${m.term})`);
      // Proposals and read requests are forwarded as local messages (term 0).
      if (m.type !== 'prop' && m.type !== 'readIndex') term = this.term;
    }
    // One copy at most (an append per follower per Ready makes this a hot path).
    const from = m.from === NONE ? this.id : m.from;
    this.msgs.push(from === m.from && term === m.term ? m : { ...m, from, term });
  }

  /** Sends an append (or a snapshot) to `to` if its progress allows. Returns whether a message was sent. */
  private maybeSendAppend(to: NodeId, sendIfEmpty: boolean): boolean {
    const pr = this.trk.progress.get(to);
    if (!pr || pr.isPaused()) return false;
    const prevIndex = pr.next - 1;
    let prevTerm: number;
    let ents: Entry[];
    try {
      prevTerm = this.raftLog.term(prevIndex);
      ents = this.raftLog.entries(pr.next, this.maxMsgSize);
    } catch (e) {
      if (e instanceof RaftError && e.code === 'RAFT_COMPACTED') return this.maybeSendSnapshot(to, pr);
      throw e;
    }
    if (ents.length === 0 && !sendIfEmpty) return false;
    this.send(msg({ type: 'app', to, index: prevIndex, logTerm: prevTerm, entries: ents, commit: this.raftLog.committed }));
    const last = ents.length > 0 ? (ents[ents.length - 1] as Entry).index : prevIndex;
    pr.sentEntries(ents.length, last, RaftLog.payloadSize(ents));
    return true;
  }

  private sendAppend(to: NodeId): void {
    this.maybeSendAppend(to, true);
  }

  private maybeSendSnapshot(to: NodeId, pr: Progress): boolean {
    // A follower that has not been heard from recently is probably down; don't waste a snapshot on it.
    if (!pr.recentActive) return false;
    let snapshot;
    try {
      snapshot = this.raftLog.snapshot();
    } catch (e) {
      if (e instanceof RaftError && e.code === 'RAFT_SNAPSHOT_TEMPORARILY_UNAVAILABLE') return false;
      throw e;
    }
    invariant(snapshot.metadata.index !== 0, 'need non-empty snapshot');
    pr.becomeSnapshot(snapshot.metadata.index);
    this.send(msg({ type: 'snap', to, snapshot }));
    return true;
  }

  private sendHeartbeat(to: NodeId, ctx: Uint8Array | undefined): void {
    const pr = this.trk.progress.get(to);
    // Never tell a follower to commit past what it is known to hold.
    const commit = Math.min(pr?.match ?? 0, this.raftLog.committed);
    this.send(msg({ type: 'heartbeat', to, commit, ...(ctx ? { context: ctx } : {}) }));
  }

  private forEachPeer(f: (id: NodeId) => void): void {
    for (const id of this.trk.ids()) if (id !== this.id) f(id);
  }

  bcastAppend(): void {
    this.forEachPeer((id) => this.sendAppend(id));
  }

  private bcastHeartbeat(): void {
    const ctx = this.readOnly.lastPendingRequestCtx();
    if (ctx) this.readOnly.roundCtx = ctxKey(ctx);
    this.bcastHeartbeatWithCtx(ctx);
  }

  private bcastHeartbeatWithCtx(ctx: Uint8Array | undefined): void {
    this.forEachPeer((id) => this.sendHeartbeat(id, ctx));
  }

  // ---- commit and append ----

  /** Advances the commit index to what a quorum holds. Only entries of the current term count (§5.4.2). */
  private maybeCommit(): boolean {
    const mci = this.trk.committed();
    if (!Number.isFinite(mci)) return false;
    if (this.bugs.commitPreviousTermByCounting && mci > this.raftLog.committed && mci <= this.raftLog.lastIndex()) {
      this.raftLog.commitTo(mci);
      return true;
    }
    return this.raftLog.maybeCommit(mci, this.term);
  }

  /** Appends entries to the leader's own log. The leader counts itself once they are persisted (advance). */
  private appendEntry(es: readonly Omit<Entry, 'term' | 'index'>[]): boolean {
    const li = this.raftLog.lastIndex();
    const ents: Entry[] = es.map((e, i) => ({ ...e, term: this.term, index: li + 1 + i }));
    if (!this.increaseUncommittedSize(ents)) return false;
    this.raftLog.append(ents);
    return true;
  }

  private increaseUncommittedSize(ents: readonly Entry[]): boolean {
    const s = RaftLog.payloadSize(ents);
    if (this.maxUncommittedSize > 0 && this.uncommittedSize > 0 && s > 0 && this.uncommittedSize + s > this.maxUncommittedSize) return false;
    this.uncommittedSize += s;
    return true;
  }

  reduceUncommittedSize(ents: readonly Entry[]): void {
    if (this.uncommittedSize === 0) return;
    const s = RaftLog.payloadSize(ents);
    this.uncommittedSize = Math.max(0, this.uncommittedSize - s);
  }

  /** Leader: called after the application persisted entries; counts the leader's own copy. */
  onPersisted(): void {
    if (this.state !== 'leader') return;
    const self = this.trk.progress.get(this.id);
    if (!self) return;
    if (self.maybeUpdate(this.raftLog.stableLastIndex()) && this.maybeCommit()) {
      this.releasePendingReadIndexMessages();
      this.bcastAppend();
    }
  }

  // ---- ticks ----

  tick(): void {
    this.tickFn();
  }

  private tickElection = (): void => {
    this.electionElapsed++;
    if (this.promotable() && this.pastElectionTimeout()) {
      this.electionElapsed = 0;
      this.step(msg({ type: 'hup', from: this.id }));
    }
  };

  private tickHeartbeat = (): void => {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.electionTimeout) {
      this.electionElapsed = 0;
      if (this.checkQuorum) this.step(msg({ type: 'checkQuorum', from: this.id }));
      // A transfer that has not finished within an election timeout is abandoned.
      if (this.state === 'leader' && this.leadTransferee !== NONE) this.abortLeaderTransfer();
    }
    if (this.state !== 'leader') return;
    if (this.heartbeatElapsed >= this.heartbeatTimeout) {
      this.heartbeatElapsed = 0;
      this.step(msg({ type: 'beat', from: this.id }));
    }
  };

  /**
   * The transport saw this follower's connection to `id`, its leader, drop (the leader's process died:
   * its kernel reset the connection). Ends the leader's lease here at once, so this member grants other
   * members' pre-votes instead of waiting out an election timeout, and returns true: the caller should
   * campaign soon. Safe whatever really happened, because elections start with a pre-vote, which members
   * still hearing from a live leader refuse. Returns false (and changes nothing) unless `id` is our leader.
   */
  leaderConnectionLost(id: NodeId): boolean {
    if (this.state !== 'follower' || this.lead === NONE || this.lead !== id) return false;
    this.electionElapsed = Math.max(this.electionElapsed, this.electionTimeout);
    return true;
  }

  /** True while a follower has heard nothing from its leader for an election timeout (its lease ended). */
  leaseEnded(): boolean {
    return this.state === 'follower' && this.electionElapsed >= this.electionTimeout;
  }

  /** True while this member is campaigning (pre-vote or vote) and has not won. */
  campaigning(): boolean {
    return this.state === 'preCandidate' || this.state === 'candidate';
  }

  pastElectionTimeout(): boolean {
    return this.electionElapsed >= this.randomizedElectionTimeout;
  }

  private resetRandomizedElectionTimeout(): void {
    this.randomizedElectionTimeout = this.electionTimeout + this.rng.int(this.electionTimeout);
  }

  // ---- role changes ----

  private reset(term: number): void {
    if (this.term !== term) {
      this.term = term;
      this.vote = NONE;
    }
    this.lead = NONE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetRandomizedElectionTimeout();
    this.abortLeaderTransfer();
    this.trk.resetVotes();
    const last = this.raftLog.lastIndex();
    for (const [id, old] of this.trk.progress) {
      const pr = new Progress(last + 1, this.trk.maxInflight, old.isLearner, this.trk.maxInflightBytes);
      if (id === this.id) pr.match = this.raftLog.stableLastIndex();
      this.trk.set(id, pr);
    }
    this.pendingConfIndex = 0;
    this.uncommittedSize = 0;
    this.readOnly = new ReadOnly();
    this.pendingReadIndexMessages = [];
  }

  becomeFollower(term: number, lead: NodeId): void {
    this.stepFn = this.stepFollower;
    this.reset(term);
    this.tickFn = this.tickElection;
    this.lead = lead;
    this.state = 'follower';
  }

  private becomeCandidate(): void {
    invariant(this.state !== 'leader', 'invalid transition [leader -> candidate]');
    this.stepFn = this.stepCandidate;
    this.reset(this.term + 1);
    this.tickFn = this.tickElection;
    this.vote = this.id;
    this.state = 'candidate';
  }

  private becomePreCandidate(): void {
    invariant(this.state !== 'leader', 'invalid transition [leader -> pre-candidate]');
    // Pre-candidates change neither term nor vote: a failed pre-election leaves no trace.
    this.stepFn = this.stepCandidate;
    this.trk.resetVotes();
    this.tickFn = this.tickElection;
    this.lead = NONE;
    this.state = 'preCandidate';
  }

  private becomeLeader(): void {
    invariant(this.state !== 'follower', 'invalid transition [follower -> leader]');
    this.stepFn = this.stepLeader;
    this.reset(this.term);
    this.tickFn = this.tickHeartbeat;
    this.lead = this.id;
    this.state = 'leader';
    const self = this.trk.progress.get(this.id);
    if (self) {
      self.becomeReplicate();
      self.recentActive = true;
    }
    // Conservatively assume the log tail holds a conf change: no new one until everything is applied.
    this.pendingConfIndex = this.raftLog.lastIndex();
    // The no-op entry: committing it commits everything before it from earlier terms (§5.4.2).
    invariant(this.appendEntry([{ type: 'normal', data: new Uint8Array(0) }]), 'empty entry was dropped');
    // The no-op does not count against the uncommitted size limit.
    this.uncommittedSize = 0;
  }

  promotable(): boolean {
    const pr = this.trk.progress.get(this.id);
    return pr !== undefined && !pr.isLearner && !this.raftLog.hasNextOrInProgressSnapshot();
  }

  private hasUnappliedConfChanges(): boolean {
    if (this.raftLog.applied >= this.raftLog.committed) return false;
    const lo = this.raftLog.applied + 1;
    const hi = this.raftLog.committed + 1;
    // Page through in bounded slices so a long unapplied tail does not build one huge array.
    for (let i = lo; i < hi; ) {
      const ents = this.raftLog.slice(i, hi, 16 * 1024 * 1024);
      for (const e of ents) if (e.type === 'confChange') return true;
      if (ents.length === 0) break;
      i += ents.length;
    }
    return false;
  }

  private hup(t: CampaignType): void {
    if (this.state === 'leader') return;
    if (!this.promotable()) return;
    // A node must not campaign while a conf change it has committed is unapplied: its view of who votes
    // may be out of date.
    if (this.hasUnappliedConfChanges()) return;
    this.campaign(t);
  }

  private campaign(t: CampaignType): void {
    if (!this.promotable()) return;
    let term: number;
    let voteMsg: MessageType;
    if (t === 'preElection') {
      this.becomePreCandidate();
      voteMsg = 'preVote';
      // Pre-votes ask about the term we would move to, without moving to it.
      term = this.term + 1;
    } else {
      this.becomeCandidate();
      voteMsg = 'vote';
      term = this.term;
    }
    // Our own vote first; in a single-voter cluster it wins outright.
    if (this.trk.isVoter(this.id)) {
      this.trk.recordVote(this.id, true);
      if (this.trk.tallyVotes().result === 'won') {
        if (t === 'preElection') this.campaign('election');
        else this.becomeLeader();
        return;
      }
    }
    for (const id of this.trk.voterList()) {
      if (id === this.id) continue;
      this.send(
        msg({
          type: voteMsg,
          to: id,
          term,
          index: this.raftLog.lastIndex(),
          logTerm: this.raftLog.lastTerm(),
          ...(t === 'transfer' ? { context: TRANSFER_CTX } : {}),
        }),
      );
    }
  }

  // ---- the one place for term rules ----

  step(m: Message): void {
    if (m.term === 0) {
      // local message
    } else if (m.term > this.term) {
      if (m.type === 'vote' || m.type === 'preVote') {
        const force = isTransferCtx(m.context);
        const inLease = this.checkQuorum && this.lead !== NONE && this.electionElapsed < this.electionTimeout;
        // We heard from a live leader within the minimum election timeout: ignore the disruptive candidate
        // (don't even raise our term), unless the leader itself asked for this election.
        if (!force && inLease) return;
      }
      if (m.type === 'preVote') {
        // Never change our term in response to a pre-vote.
      } else if (m.type === 'preVoteResp' && !m.reject) {
        // A granted pre-vote carries the future term; we move to it when we win the pre-election.
      } else if (m.type === 'app' || m.type === 'heartbeat' || m.type === 'snap') {
        this.becomeFollower(m.term, m.from);
      } else {
        this.becomeFollower(m.term, NONE);
      }
    } else if (m.term < this.term) {
      if ((this.checkQuorum || this.preVote) && (m.type === 'heartbeat' || m.type === 'app')) {
        // A stale leader (e.g. just back from a partition) would otherwise never learn of the new term,
        // because with pre-vote/check-quorum nobody campaigns at a higher term to tell it.
        this.send(msg({ type: 'appResp', to: m.from }));
      } else if (m.type === 'preVote') {
        // Tell the pre-candidate our term so it can catch up instead of waiting forever.
        this.send(msg({ type: 'preVoteResp', to: m.from, term: this.term, reject: true }));
      }
      return;
    }

    switch (m.type) {
      case 'hup':
        this.hup(this.preVote ? 'preElection' : 'election');
        return;
      case 'vote':
      case 'preVote': {
        const canVote =
          this.vote === m.from ||
          (this.vote === NONE && this.lead === NONE) ||
          (m.type === 'preVote' && m.term > this.term) ||
          (m.type === 'vote' && this.bugs.voteTwice === true);
        if (canVote && this.raftLog.isUpToDate(m.index, m.logTerm)) {
          // Reply with the term from the request: a pre-vote's future term, or the election's term.
          this.send(msg({ type: voteRespType(m.type), to: m.from, term: m.term }));
          if (m.type === 'vote') {
            this.electionElapsed = 0;
            this.vote = m.from;
          }
        } else if (this.term !== 0) {
          // (A node that has never had a term has nothing to teach the candidate; it just stays silent.)
          this.send(msg({ type: voteRespType(m.type), to: m.from, term: this.term, reject: true }));
        }
        return;
      }
      default:
        this.stepFn(m);
    }
  }

  // ---- leader ----

  private stepLeader = (m: Message): void => {
    switch (m.type) {
      case 'beat':
        this.bcastHeartbeat();
        return;
      case 'checkQuorum':
        if (!this.trk.quorumActive(this.id)) {
          this.becomeFollower(this.term, NONE);
          return;
        }
        // Start a new window: a peer must be heard from again to count as active next time.
        for (const [id, pr] of this.trk.progress) if (id !== this.id) pr.recentActive = false;
        return;
      case 'prop':
        this.leaderPropose(m);
        return;
      case 'readIndex':
        this.leaderReadIndex(m);
        return;
      default:
        break;
    }

    const pr = this.trk.progress.get(m.from);
    if (!pr) return; // from a node no longer in the configuration
    switch (m.type) {
      case 'appResp':
        this.handleAppendResponse(m, pr);
        return;
      case 'heartbeatResp':
        this.handleHeartbeatResponse(m, pr);
        return;
      case 'snapStatus':
        if (pr.state !== 'snapshot') return;
        if (m.reject) pr.pendingSnapshot = 0;
        pr.becomeProbe();
        // Wait for an append response or heartbeat response before probing again.
        pr.msgAppFlowPaused = true;
        return;
      case 'unreachable':
        // Optimistic appends were probably lost: fall back to probing.
        if (pr.state === 'replicate') pr.becomeProbe();
        return;
      case 'transferLeader':
        this.handleTransferLeader(m, pr);
        return;
      default:
        return;
    }
  };

  private leaderPropose(m: Message): void {
    const local = m.from === this.id || m.from === NONE;
    const drop = (reason: string): void => {
      // A forwarded proposal is dropped silently (the follower's client times out and retries);
      // a local one is refused so the caller can redirect.
      if (local) throw errProposalDropped(reason, this.lead);
    };
    invariant(m.entries.length > 0, `${this.id} stepped empty proposal`);
    if (!this.trk.progress.has(this.id)) return drop('this leader was removed from the configuration');
    if (this.leadTransferee !== NONE) return drop(`leader transfer to ${this.leadTransferee} in progress`);
    const ents = [...m.entries];
    for (let i = 0; i < ents.length; i++) {
      const e = ents[i] as Entry;
      if (e.type !== 'confChange') continue;
      if (this.pendingConfIndex > this.raftLog.applied) return drop('a configuration change is already pending');
      const cc = decodeConfChange(e.data);
      if (cc.type === 'addLearner' && this.trk.isVoter(cc.nodeId)) return drop(`node ${cc.nodeId} is a voter; demotion is not supported`);
      this.pendingConfIndex = this.raftLog.lastIndex() + i + 1;
    }
    if (!this.appendEntry(ents)) return drop('too many uncommitted entries');
    this.bcastAppend();
  }

  private leaderReadIndex(m: Message): void {
    // With a single voter there is nobody to confirm leadership with: the commit index is safe.
    if (this.trk.voters.size === 1 && this.trk.isVoter(this.id)) {
      this.respondToReadIndex(m, this.raftLog.committed);
      return;
    }
    // Until an entry of our own term commits, our commit index may be behind the previous leader's.
    if (!this.committedEntryInCurrentTerm()) {
      this.pendingReadIndexMessages.push(m);
      return;
    }
    this.sendReadIndexResponse(m);
  }

  private sendReadIndexResponse(m: Message): void {
    if (this.bugs.readWithoutQuorum) {
      this.respondToReadIndex(m, this.raftLog.committed);
      return;
    }
    this.readOnly.addRequest(this.raftLog.committed, m);
    // One heartbeat round at a time; reads arriving while it is in flight share the next one.
    if (this.readOnly.roundCtx === '') {
      this.readOnly.roundCtx = ctxKey(m.context);
      this.bcastHeartbeatWithCtx(m.context);
    }
  }

  private respondToReadIndex(req: Message, index: number): void {
    if (req.from === NONE || req.from === this.id) {
      this.readStates.push({ index, requestCtx: req.context ?? new Uint8Array(0) });
    } else {
      this.send(msg({ type: 'readIndexResp', to: req.from, index, ...(req.context ? { context: req.context } : {}) }));
    }
  }

  private committedEntryInCurrentTerm(): boolean {
    return this.raftLog.zeroTermOnOutOfBounds(this.raftLog.committed) === this.term;
  }

  private releasePendingReadIndexMessages(): void {
    if (this.pendingReadIndexMessages.length === 0 || !this.committedEntryInCurrentTerm()) return;
    const held = this.pendingReadIndexMessages;
    this.pendingReadIndexMessages = [];
    for (const m of held) this.sendReadIndexResponse(m);
  }

  private handleAppendResponse(m: Message, pr: Progress): void {
    pr.recentActive = true;
    if (m.reject) {
      // Fast back-off: jump past the follower's whole conflicting term using its hint (§5.3).
      let nextProbeIdx = m.rejectHint;
      if (m.logTerm > 0) nextProbeIdx = this.raftLog.findConflictByTerm(m.rejectHint, m.logTerm)[0];
      if (pr.maybeDecrTo(m.index, nextProbeIdx)) {
        if (pr.state === 'replicate') pr.becomeProbe();
        this.sendAppend(m.from);
      }
      return;
    }
    const oldPaused = pr.isPaused();
    // A probe answered at exactly the known match (an idle follower knocked back to probing) proves the logs
    // agree there just as well as a new match does: without this it would stay in probe until the next write.
    if (!pr.maybeUpdate(m.index) && !(pr.state === 'probe' && pr.match === m.index)) return;
    if (pr.state === 'probe') {
      pr.becomeReplicate();
    } else if (pr.state === 'snapshot' && pr.match + 1 >= this.raftLog.firstIndex()) {
      // The follower caught up through the snapshot; resume normal replication.
      pr.becomeProbe();
      pr.becomeReplicate();
    } else if (pr.state === 'replicate') {
      pr.inflights.freeLE(m.index);
    }
    if (this.maybeCommit()) {
      this.releasePendingReadIndexMessages();
      this.bcastAppend();
    } else if (oldPaused) {
      this.sendAppend(m.from);
    }
    // Pipelining: keep the follower's window full while there is more to send.
    while (this.maybeSendAppend(m.from, false)) {
      // loop
    }
    if (m.from === this.leadTransferee && pr.match === this.raftLog.lastIndex()) this.sendTimeoutNow(m.from);
  }

  private handleHeartbeatResponse(m: Message, pr: Progress): void {
    pr.recentActive = true;
    pr.msgAppFlowPaused = false;
    if (pr.match < this.raftLog.lastIndex() || pr.state === 'probe') this.sendAppend(m.from);
    if (!m.context || m.context.length === 0) return;
    const acks = this.readOnly.recvAck(m.from, m.context);
    if (!acks) return;
    // The leader's own acknowledgement is implicit.
    let n = acks.has(this.id) ? 0 : 1;
    for (const id of acks) if (this.trk.isVoter(id)) n++;
    if (n < this.trk.quorum()) return;
    for (const rs of this.readOnly.advance(m.context)) this.respondToReadIndex(rs.req, rs.index);
    // Reads that queued during that round get the next one.
    if (this.readOnly.hasPending() && this.readOnly.roundCtx === '') this.bcastHeartbeat();
  }

  private handleTransferLeader(m: Message, pr: Progress): void {
    if (pr.isLearner) return;
    const transferee = m.from;
    const last = this.leadTransferee;
    if (last !== NONE) {
      if (last === transferee) return; // already transferring to it
      this.abortLeaderTransfer();
    }
    if (transferee === this.id) return; // already the leader
    // The transfer must finish within an election timeout.
    this.electionElapsed = 0;
    this.leadTransferee = transferee;
    if (pr.match === this.raftLog.lastIndex()) this.sendTimeoutNow(transferee);
    else this.sendAppend(transferee);
  }

  private sendTimeoutNow(to: NodeId): void {
    this.send(msg({ type: 'timeoutNow', to }));
  }

  abortLeaderTransfer(): void {
    this.leadTransferee = NONE;
  }

  // ---- candidate ----

  private stepCandidate = (m: Message): void => {
    const myVoteResp: MessageType = this.state === 'preCandidate' ? 'preVoteResp' : 'voteResp';
    switch (m.type) {
      case 'prop':
        if (m.from === this.id || m.from === NONE) throw errProposalDropped('no leader (election in progress)', NONE);
        return;
      case 'app':
        this.becomeFollower(m.term, m.from);
        this.handleAppendEntries(m);
        return;
      case 'heartbeat':
        this.becomeFollower(m.term, m.from);
        this.handleHeartbeat(m);
        return;
      case 'snap':
        this.becomeFollower(m.term, m.from);
        this.handleSnapshot(m);
        return;
      case 'preVoteResp':
      case 'voteResp': {
        if (m.type !== myVoteResp) return; // stale answer from an earlier phase
        this.trk.recordVote(m.from, !m.reject);
        const { result } = this.trk.tallyVotes();
        if (result === 'won') {
          if (this.state === 'preCandidate') {
            this.campaign('election');
          } else {
            this.becomeLeader();
            this.bcastAppend();
          }
        } else if (result === 'lost') {
          // A rejection from a higher term already made us a follower in step(); this is a plain loss.
          this.becomeFollower(this.term, NONE);
        }
        return;
      }
      default:
        return; // timeoutNow, readIndex, transferLeader: nobody to serve them yet
    }
  };

  // ---- follower ----

  private stepFollower = (m: Message): void => {
    switch (m.type) {
      case 'prop':
        if (this.lead === NONE) {
          if (m.from === this.id || m.from === NONE) throw errProposalDropped('no leader', NONE);
          return;
        }
        if (this.disableProposalForwarding) {
          if (m.from === this.id || m.from === NONE) throw errProposalDropped(`not the leader (leader is ${this.lead})`, this.lead);
          return;
        }
        this.send({ ...m, to: this.lead });
        return;
      case 'app':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleAppendEntries(m);
        return;
      case 'heartbeat':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleHeartbeat(m);
        return;
      case 'snap':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleSnapshot(m);
        return;
      case 'transferLeader':
        if (this.lead === NONE) return;
        this.send({ ...m, to: this.lead });
        return;
      case 'timeoutNow':
        // The leader asks us to take over: campaign at once, skipping pre-vote.
        this.hup('transfer');
        return;
      case 'readIndex':
        if (this.lead === NONE) return;
        this.send({ ...m, to: this.lead });
        return;
      case 'readIndexResp':
        this.readStates.push({ index: m.index, requestCtx: m.context ?? new Uint8Array(0) });
        return;
      default:
        return;
    }
  };

  private handleAppendEntries(m: Message): void {
    if (m.index < this.raftLog.committed) {
      this.send(msg({ type: 'appResp', to: m.from, index: this.raftLog.committed }));
      return;
    }
    const lastNew = this.raftLog.maybeAppend(m.index, m.logTerm, m.commit, m.entries);
    if (lastNew >= 0) {
      this.send(msg({ type: 'appResp', to: m.from, index: lastNew }));
      return;
    }
    // Reject with a hint: the largest index whose term is <= the leader's term at m.index, so the
    // leader can skip a whole conflicting term in one round trip.
    const hintIndex = Math.min(m.index, this.raftLog.lastIndex());
    const [idx, term] = this.raftLog.findConflictByTerm(hintIndex, m.logTerm);
    this.send(msg({ type: 'appResp', to: m.from, index: m.index, reject: true, rejectHint: idx, logTerm: term }));
  }

  private handleHeartbeat(m: Message): void {
    this.raftLog.commitTo(m.commit);
    this.send(msg({ type: 'heartbeatResp', to: m.from, ...(m.context ? { context: m.context } : {}) }));
  }

  private handleSnapshot(m: Message): void {
    const s = m.snapshot;
    if (!s) return;
    if (this.restore(s)) {
      this.send(msg({ type: 'appResp', to: m.from, index: this.raftLog.lastIndex() }));
    } else {
      this.send(msg({ type: 'appResp', to: m.from, index: this.raftLog.committed }));
    }
  }

  /** Installs a snapshot if it moves us forward. Returns whether it was installed. */
  private restore(s: NonNullable<Message['snapshot']>): boolean {
    if (s.metadata.index <= this.raftLog.committed) return false;
    if (this.state !== 'follower') {
      // Only a leader of this term sends snapshots; be defensive and fall back to follower.
      this.becomeFollower(this.term + 1, NONE);
      return false;
    }
    const cs = s.metadata.confState;
    if (!cs.voters.includes(this.id) && !cs.learners.includes(this.id)) return false;
    if (this.raftLog.matchTerm(s.metadata.index, s.metadata.term)) {
      // We already have the entry: just fast-forward the commit index.
      this.raftLog.commitTo(s.metadata.index);
      return false;
    }
    this.raftLog.restore(s);
    this.trk.clear();
    this.applyConfState(cs);
    return true;
  }

  // ---- configuration ----

  private applyConfState(cs: ConfState): void {
    this.trk.setConfig(cs.voters, cs.learners);
    const next = this.raftLog.lastIndex() + 1;
    for (const id of [...cs.voters, ...cs.learners]) {
      if (this.trk.progress.has(id)) continue;
      const pr = new Progress(next, this.trk.maxInflight, cs.learners.includes(id), this.trk.maxInflightBytes);
      pr.recentActive = true;
      this.trk.set(id, pr);
    }
    for (const id of [...this.trk.progress.keys()]) {
      if (!cs.voters.includes(id) && !cs.learners.includes(id)) this.trk.delete(id);
    }
    this.isLearner = this.trk.learners.has(this.id);
  }

  confState(): ConfState {
    return { voters: this.trk.voterList(), learners: this.trk.learnerList() };
  }

  applyConfChange(cc: ConfChange): ConfState {
    const voters = new Set(this.trk.voters);
    const learners = new Set(this.trk.learners);
    switch (cc.type) {
      case 'addNode':
        learners.delete(cc.nodeId);
        voters.add(cc.nodeId);
        break;
      case 'addLearner':
        // Demoting a voter is refused at proposal time; a learner add for a voter is a no-op here.
        if (!voters.has(cc.nodeId)) learners.add(cc.nodeId);
        break;
      case 'removeNode':
        voters.delete(cc.nodeId);
        learners.delete(cc.nodeId);
        break;
    }
    this.applyConfState({ voters: [...voters], learners: [...learners] });
    for (const id of voters) {
      const pr = this.trk.progress.get(id);
      if (pr) pr.isLearner = false;
    }
    if (this.state !== 'leader') return this.confState();

    // A leader that was removed or demoted steps down; the rest of the cluster elects a new one.
    if (!this.trk.progress.has(this.id) || this.isLearner) {
      this.becomeFollower(this.term, NONE);
      return this.confState();
    }
    // The quorum may have changed: commit what it now allows, and start replicating to new members.
    if (this.maybeCommit()) {
      this.releasePendingReadIndexMessages();
      this.bcastAppend();
    } else {
      this.forEachPeer((id) => this.maybeSendAppend(id, false));
    }
    if (this.leadTransferee !== NONE && !this.trk.voters.has(this.leadTransferee)) this.abortLeaderTransfer();
    return this.confState();
  }

  /** For local inputs: raises a clear error on messages the application must not step. */
  static checkStepAllowed(m: Message, knownPeer: boolean): void {
    if (isLocalMessage(m.type)) throw new RaftError('RAFT_STEP_LOCAL_MSG', `raft: cannot step raft local message ${m.type}`);
    if (isResponseMessage(m.type) && !knownPeer) throw new RaftError('RAFT_STEP_PEER_NOT_FOUND', `raft: cannot step as peer not found (${m.from})`);
  }
}
