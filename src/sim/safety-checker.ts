// The Raft safety properties (Raft paper, Fig. 3), checked incrementally at the points where state
// changes: each Ready before and after it is persisted, each applied entry, each restored snapshot.
// Checks look only at what a node persisted or applied, never at the core's private fields.
import type { MemoryStorage } from '../raft/storage.js';
import type { Entry, NodeId, Ready, StateType } from '../raft/types.js';
import { NONE } from '../raft/types.js';
import { entryFingerprint, HASH_SEED, mixInt } from './hash.js';
import { SimViolation } from './violation.js';

/** A leader's log as it was when it won: what every entry committed in an earlier term must be in. */
interface LeaderLog {
  readonly term: number;
  readonly node: NodeId;
  readonly first: number;
  readonly terms: readonly number[];
}

// Log-matching keys pack (index, term) into one number; terms stay far below this in a run.
const TERM_LIMIT = 1 << 20;

export class SafetyChecker {
  /**
   * With strict checks, two more rules from the paper's Fig. 2 are checked directly instead of only
   * through their consequences: a node's vote never changes within a term, and a leader only advances
   * its commit index to an entry of its own term.
   */
  readonly strict: boolean;
  elections = 0;
  commits = 0;

  private readonly leaderOfTerm = new Map<number, NodeId>();
  private readonly currentLeaderTerm = new Map<NodeId, number>();
  private readonly leaderLogs: LeaderLog[] = [];
  // index -> term of the committed entry, the lowest term in which it was seen committed, and by whom.
  private readonly committedTerm: number[] = [];
  private readonly committedSeenIn: number[] = [];
  private readonly committedSeenBy: NodeId[] = [];
  private maxCommitted = 1;
  // (index, term) -> fingerprint of the entry and of its predecessor's term: Log Matching, inductively.
  private readonly logIds = new Map<number, number>();
  private readonly logIdsBy = new Map<number, NodeId>();
  // index -> the entry applied there, the apply-hash chain after it, and the first node that applied it.
  private readonly appliedFp: number[] = [];
  private readonly appliedChain: number[] = [];
  private readonly appliedBy: NodeId[] = [];

  constructor(strict: boolean) {
    this.strict = strict;
    // The bootstrap snapshot at 1/1 is committed and applied (as the empty state) everywhere.
    this.committedTerm[1] = 1;
    this.committedSeenIn[1] = 1;
    this.committedSeenBy[1] = NONE;
    this.appliedChain[1] = HASH_SEED;
  }

  /** The term in which the node currently leads, if it does. */
  leaderTerm(node: NodeId): number | undefined {
    return this.currentLeaderTerm.get(node);
  }

  /** Hard state monotonicity and Leader Append-Only, before the Ready touches storage. */
  beforePersist(node: NodeId, storage: MemoryStorage, rd: Ready): void {
    const prev = storage.getHardState();
    const hs = rd.hardState;
    if (hs) {
      if (hs.term < prev.term) fail('hard-state-regression', `node ${node} persists term ${hs.term} after term ${prev.term}`);
      if (hs.commit < prev.commit) {
        fail('hard-state-regression', `node ${node} persists commit ${hs.commit} after commit ${prev.commit} (term ${hs.term})`);
      }
      if (this.strict && hs.term === prev.term && prev.vote !== NONE && hs.vote !== prev.vote) {
        fail('vote-changed', `node ${node} voted for ${prev.vote} in term ${hs.term}, then persists a vote for ${hs.vote} in the same term`);
      }
    }
    const lt = this.currentLeaderTerm.get(node);
    if (lt !== undefined && lt === (hs?.term ?? prev.term)) {
      if (rd.snapshot) fail('leader-append-only', `leader ${node} (term ${lt}) installs snapshot ${rd.snapshot.metadata.term}/${rd.snapshot.metadata.index}`);
      const first = rd.entries[0];
      if (first && first.index <= storage.lastIndex()) {
        fail('leader-append-only', `leader ${node} (term ${lt}) overwrites its entries ${first.index}..${storage.lastIndex()} (old term at ${first.index}: ${storage.term(first.index)}, new: ${first.term})`);
      }
    }
  }

  /** Election Safety. Returns true when this makes the node a new leader. */
  onSoftState(node: NodeId, state: StateType, term: number): boolean {
    if (state !== 'leader') {
      this.currentLeaderTerm.delete(node);
      return false;
    }
    const other = this.leaderOfTerm.get(term);
    if (other !== undefined && other !== node) {
      fail('election-safety', `node ${node} became leader of term ${term}, but node ${other} already led term ${term}`);
    }
    const isNew = this.currentLeaderTerm.get(node) !== term;
    this.leaderOfTerm.set(term, node);
    this.currentLeaderTerm.set(node, term);
    if (isNew && other === undefined) this.elections++;
    return isNew;
  }

  /** The node stopped (crash or removal): it leads nothing any more. */
  onDown(node: NodeId): void {
    this.currentLeaderTerm.delete(node);
  }

  /**
   * Log Matching on the persisted entries, and what the new hard state says is committed.
   * `leaderTermThroughout` is set when the node led the same term before and after this Ready.
   */
  afterPersist(node: NodeId, storage: MemoryStorage, rd: Ready, prevCommit: number, leaderTermThroughout: number | undefined): void {
    this.onEntriesPersisted(node, storage, rd.entries);
    const hs = storage.getHardState();
    if (rd.snapshot) this.observeCommitted(node, rd.snapshot.metadata.index, rd.snapshot.metadata.term, hs.term);
    if (hs.commit <= prevCommit) return;
    if (hs.commit > storage.lastIndex()) fail('commit-beyond-log', `node ${node} persists commit ${hs.commit} beyond its last index ${storage.lastIndex()}`);
    if (this.strict && leaderTermThroughout === hs.term && storage.term(hs.commit) !== hs.term) {
      fail('commit-previous-term', `leader ${node} of term ${hs.term} advanced its commit to ${hs.commit}, an entry of term ${storage.term(hs.commit)}: a leader only commits entries of its own term by counting replicas`);
    }
    for (let i = Math.max(prevCommit + 1, storage.firstIndex()); i <= hs.commit; i++) {
      this.observeCommitted(node, i, storage.term(i), hs.term);
    }
  }

  /** Log Matching: an (index, term) pair names one entry, with one predecessor, across all nodes. */
  onEntriesPersisted(node: NodeId, storage: MemoryStorage, entries: readonly Entry[]): void {
    const first = storage.firstIndex();
    for (const e of entries) {
      if (e.index < first) continue; // already behind a snapshot: storage dropped it
      if (e.term >= TERM_LIMIT) throw new Error(`sim: term ${e.term} is beyond the checker's limit`);
      const key = e.index * TERM_LIMIT + e.term;
      const id = mixInt(entryFingerprint(e), storage.term(e.index - 1));
      const seen = this.logIds.get(key);
      if (seen === undefined) {
        this.logIds.set(key, id);
        this.logIdsBy.set(key, node);
      } else if (seen !== id) {
        fail('log-matching', `node ${node} persists entry ${e.term}/${e.index} (after term ${storage.term(e.index - 1)}) that differs from node ${this.logIdsBy.get(key) ?? '?'}'s entry ${e.term}/${e.index}, in content or in its predecessor`);
      }
    }
  }

  /** Leader Completeness, when a node becomes leader: its log holds every entry committed in earlier terms. */
  onNewLeader(node: NodeId, term: number, storage: MemoryStorage): void {
    const first = storage.firstIndex();
    const last = storage.lastIndex();
    const terms: number[] = [];
    for (let i = first; i <= last; i++) terms.push(storage.term(i));
    const log: LeaderLog = { term, node, first, terms };
    this.leaderLogs.push(log);
    for (let i = first; i <= this.maxCommitted; i++) {
      const ct = this.committedTerm[i];
      if (ct !== undefined && (this.committedSeenIn[i] as number) < term) this.checkLeaderHas(log, i, ct);
    }
  }

  /** State Machine Safety: every node applies the same entry at each index, in order, only once committed. */
  onApply(node: NodeId, e: Entry, prevApplied: number, commit: number, chainAfter: number): void {
    if (e.index !== prevApplied + 1) fail('apply-order', `node ${node} applies entry ${e.term}/${e.index} after applying up to ${prevApplied}`);
    if (e.index > commit) fail('apply-order', `node ${node} applies entry ${e.term}/${e.index} beyond its persisted commit ${commit}`);
    const fp = entryFingerprint(e);
    const seen = this.appliedFp[e.index];
    if (seen === undefined) {
      this.appliedFp[e.index] = fp;
      this.appliedChain[e.index] = chainAfter;
      this.appliedBy[e.index] = node;
    } else if (seen !== fp || this.appliedChain[e.index] !== chainAfter) {
      fail('state-machine-safety', `node ${node} applies entry ${e.term}/${e.index}, but node ${this.appliedBy[e.index] ?? '?'} applied a different ${seen !== fp ? 'entry' : 'history'} at index ${e.index}`);
    }
    const ct = this.committedTerm[e.index];
    if (ct !== undefined && ct !== e.term) {
      fail('state-machine-safety', `node ${node} applies entry ${e.term}/${e.index}, but the entry committed at ${e.index} has term ${ct}`);
    }
  }

  /** A node restored its state machine from a snapshot: it must equal what others applied up to there. */
  onRestore(node: NodeId, index: number, chain: number): void {
    const seen = this.appliedChain[index];
    if (seen === undefined) this.appliedChain[index] = chain;
    else if (seen !== chain) fail('state-machine-safety', `node ${node} restores a snapshot at ${index} whose history differs from what node ${this.appliedBy[index] ?? '?'} applied`);
  }

  private observeCommitted(node: NodeId, index: number, term: number, seenIn: number): void {
    const ct = this.committedTerm[index];
    if (ct !== undefined && ct !== term) {
      fail('state-machine-safety', `node ${node} holds entry ${term}/${index} as committed, but ${ct}/${index} was committed before (seen at node ${this.committedSeenBy[index] ?? '?'})`);
    }
    const prevSeenIn = ct === undefined ? Infinity : (this.committedSeenIn[index] as number);
    if (seenIn >= prevSeenIn) return;
    if (ct === undefined) this.commits++;
    this.committedTerm[index] = term;
    this.committedSeenIn[index] = seenIn;
    this.committedSeenBy[index] = node;
    if (index > this.maxCommitted) this.maxCommitted = index;
    // Leaders already elected in later terms must hold it too (the commit may be learned late).
    for (const log of this.leaderLogs) if (log.term > seenIn && log.term <= prevSeenIn) this.checkLeaderHas(log, index, term);
  }

  private checkLeaderHas(log: LeaderLog, index: number, term: number): void {
    if (index < log.first) return; // compacted there: it was applied, which onApply/onRestore cover
    const lt = log.terms[index - log.first];
    if (lt === term) return;
    const has = lt === undefined ? `its log ends at ${log.first + log.terms.length - 1}` : `it holds ${lt}/${index} instead`;
    fail('leader-completeness', `node ${log.node} became leader of term ${log.term} without entry ${term}/${index}, committed in term ${this.committedSeenIn[index] ?? '?'} (seen at node ${this.committedSeenBy[index] ?? '?'}): ${has}`);
  }
}

function fail(kind: ConstructorParameters<typeof SimViolation>[0], message: string): never {
  throw new SimViolation(kind, message);
}
