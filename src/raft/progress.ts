// What the leader knows about each follower's log: match/next indexes and the replication state.
// probe: one append at a time until we find where logs agree; replicate: optimistic pipelined appends
// within an inflight window; snapshot: a snapshot is in flight, nothing else is sent.
import { Inflights } from './inflights.js';
import type { NodeId } from './types.js';
import { compareNodeIds } from './types.js';

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

export class Progress {
  /** Highest index known to be replicated on the follower. Invariant: match < next. */
  match = 0;
  /** Next index to send. */
  next: number;
  state: ProgressState = 'probe';
  /** In snapshot state: the index of the snapshot being sent. */
  pendingSnapshot = 0;
  /** Heard from this peer in the current election timeout window (check-quorum). */
  recentActive = false;
  /** In probe state: an append has been sent and we wait for its answer (or a heartbeat response). */
  msgAppFlowPaused = false;
  readonly inflights: Inflights;
  isLearner: boolean;

  constructor(next: number, maxInflight: number, isLearner: boolean, maxInflightBytes = 0) {
    this.next = next;
    this.inflights = new Inflights(maxInflight, maxInflightBytes);
    this.isLearner = isLearner;
  }

  private resetState(state: ProgressState): void {
    this.msgAppFlowPaused = false;
    this.pendingSnapshot = 0;
    this.state = state;
    this.inflights.reset();
  }

  becomeProbe(): void {
    // After a snapshot, resume from just past it (or past match, whichever is larger).
    if (this.state === 'snapshot') {
      const pending = this.pendingSnapshot;
      this.resetState('probe');
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.resetState('probe');
      this.next = this.match + 1;
    }
  }

  becomeReplicate(): void {
    this.resetState('replicate');
    this.next = this.match + 1;
  }

  becomeSnapshot(snapshotIndex: number): void {
    this.resetState('snapshot');
    this.pendingSnapshot = snapshotIndex;
  }

  /** Called after sending entries up to `lastIndex` (bytes = payload size). */
  sentEntries(entries: number, lastIndex: number, bytes: number): void {
    if (this.state === 'replicate') {
      if (entries > 0) {
        this.next = lastIndex + 1;
        this.inflights.add(lastIndex, bytes);
      }
      this.msgAppFlowPaused = this.inflights.full();
    } else if (this.state === 'probe') {
      if (entries > 0) this.msgAppFlowPaused = true;
    }
  }

  /** An acknowledgement up to n. Returns false if it was stale (told us nothing new). */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      updated = true;
      this.msgAppFlowPaused = false;
    }
    this.next = Math.max(this.next, n + 1);
    return updated;
  }

  /**
   * A rejection of the append at `rejected`; `matchHint` is the follower's hint of where to retry.
   * Returns false if the rejection is stale and must be ignored.
   */
  maybeDecrTo(rejected: number, matchHint: number): boolean {
    if (this.state === 'replicate') {
      // Stale unless it rejects the entries right after what we know matches.
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    // Probe: only the most recent probe's rejection counts.
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1);
    this.msgAppFlowPaused = false;
    return true;
  }

  /** Whether sending more appends should wait (probe already in flight, window full, or snapshot). */
  isPaused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.msgAppFlowPaused;
      case 'replicate':
        return this.msgAppFlowPaused;
      case 'snapshot':
        return true;
    }
  }

  describe(): string {
    let s = `${this.state} match=${this.match} next=${this.next}`;
    if (this.isLearner) s += ' learner';
    if (this.isPaused()) s += ' paused';
    if (this.pendingSnapshot > 0) s += ` pendingSnap=${this.pendingSnapshot}`;
    if (!this.recentActive) s += ' inactive';
    const inflight = this.inflights.count();
    if (inflight > 0) s += ` inflight=${inflight}${this.inflights.full() ? '[full]' : ''}`;
    return s;
  }
}

export type VoteResult = 'won' | 'lost' | 'pending';

/** committed()'s stand-in for a voter that has no progress (yet): nothing matched. */
const NO_PROGRESS = { match: 0 } as Progress;

/**
 * The set of progresses plus the voter/learner configuration and quorum arithmetic. Progresses change
 * only through set/delete/clear and the configuration only by setConfig, so what the per-message paths
 * need (ids() in order, the voters' progresses for committed()) is kept between changes: looking ids up
 * in a Map costs more with bigint keys than with small numbers.
 */
export class ProgressTracker {
  private readonly byId = new Map<NodeId, Progress>();
  private voterSet: ReadonlySet<NodeId> = new Set<NodeId>();
  private learnerSet: ReadonlySet<NodeId> = new Set<NodeId>();
  /** Votes received in the current election: true = granted. */
  readonly votes = new Map<NodeId, boolean>();
  /** committed()'s scratch: voter matches, sorted in place on each call. */
  private readonly matches: number[] = [];
  /** What ids() returns, and the voters' progresses; undefined once progresses or voters change. */
  private sortedIds: NodeId[] | undefined;
  private voterProgress: Progress[] | undefined;

  get progress(): ReadonlyMap<NodeId, Progress> {
    return this.byId;
  }

  get voters(): ReadonlySet<NodeId> {
    return this.voterSet;
  }

  get learners(): ReadonlySet<NodeId> {
    return this.learnerSet;
  }

  set(id: NodeId, pr: Progress): void {
    this.byId.set(id, pr);
    this.changed();
  }

  delete(id: NodeId): void {
    this.byId.delete(id);
    this.changed();
  }

  clear(): void {
    this.byId.clear();
    this.changed();
  }

  setConfig(voters: Iterable<NodeId>, learners: Iterable<NodeId>): void {
    this.voterSet = new Set(voters);
    this.learnerSet = new Set(learners);
    this.changed();
  }

  private changed(): void {
    this.sortedIds = undefined;
    this.voterProgress = undefined;
  }

  constructor(
    readonly maxInflight: number,
    readonly maxInflightBytes = 0,
  ) {}

  isVoter(id: NodeId): boolean {
    return this.voters.has(id);
  }

  quorum(): number {
    return Math.floor(this.voters.size / 2) + 1;
  }

  /**
   * The largest index replicated on a quorum of voters. With no voters, Infinity (nothing to wait on).
   * Runs on every append response: it sorts in a kept array, without allocating.
   */
  committed(): number {
    if (this.voterSet.size === 0) return Number.POSITIVE_INFINITY;
    const m = this.matches;
    let n = 0;
    // A voter without a progress counts as match 0 (a zero-match stand-in keeps the array dense).
    this.voterProgress ??= [...this.voterSet].map((id) => this.byId.get(id) ?? NO_PROGRESS);
    for (const pr of this.voterProgress) {
      // Insertion into descending order.
      const v = pr.match;
      let i = n++;
      while (i > 0 && (m[i - 1] as number) < v) {
        m[i] = m[i - 1] as number;
        i--;
      }
      m[i] = v;
    }
    return m[this.quorum() - 1] as number;
  }

  recordVote(id: NodeId, granted: boolean): void {
    if (!this.votes.has(id)) this.votes.set(id, granted);
  }

  resetVotes(): void {
    this.votes.clear();
  }

  tallyVotes(): { granted: number; rejected: number; result: VoteResult } {
    let granted = 0;
    let rejected = 0;
    for (const id of this.voters) {
      const v = this.votes.get(id);
      if (v === true) granted++;
      else if (v === false) rejected++;
    }
    const q = this.quorum();
    const missing = this.voters.size - granted - rejected;
    let result: VoteResult = 'pending';
    if (granted >= q) result = 'won';
    else if (granted + missing < q) result = 'lost';
    return { granted, rejected, result };
  }

  /** Whether a quorum of voters was recently active (the leader counts itself as active). */
  quorumActive(self: NodeId): boolean {
    let active = 0;
    for (const id of this.voters) {
      if (id === self || this.progress.get(id)?.recentActive) active++;
    }
    return active >= this.quorum();
  }

  /** Ids of every member, sorted for deterministic iteration; kept between changes, not to be changed by callers. */
  ids(): readonly NodeId[] {
    this.sortedIds ??= [...this.byId.keys()].sort(compareNodeIds);
    return this.sortedIds;
  }

  voterList(): NodeId[] {
    return [...this.voters].sort(compareNodeIds);
  }

  learnerList(): NodeId[] {
    return [...this.learners].sort(compareNodeIds);
  }
}
