// The log as the core sees it: persisted entries in Storage plus the unstable tail, with the commit and
// apply cursors. Invariant: applied <= applying <= committed <= lastIndex().
import type { Entry, Snapshot } from './types.js';
import type { Storage } from './storage.js';
import { limitSize } from './storage.js';
import { RaftError, invariant } from './errors.js';
import { Unstable } from './log-unstable.js';
import { entryPayloadSize, entrySize } from './types.js';

export class RaftLog {
  readonly unstable: Unstable;
  /** Highest index known to be committed on a quorum. */
  committed: number;
  /** Highest index the application has applied (acknowledged through advance()). */
  applied: number;
  /** Highest index handed to the application for applying (in a Ready not yet advanced). */
  applying: number;

  constructor(
    readonly storage: Storage,
    readonly maxApplyingEntsSize: number,
  ) {
    const first = storage.firstIndex();
    const last = storage.lastIndex();
    this.unstable = new Unstable(last + 1);
    // The snapshot index is committed and applied by definition.
    this.committed = first - 1;
    this.applied = first - 1;
    this.applying = first - 1;
  }

  firstIndex(): number {
    return this.unstable.maybeFirstIndex() ?? this.storage.firstIndex();
  }

  lastIndex(): number {
    return this.unstable.maybeLastIndex() ?? this.storage.lastIndex();
  }

  /** The last index that is durable (persisted by the application). */
  stableLastIndex(): number {
    return Math.min(this.lastIndex(), this.unstable.offset - 1);
  }

  lastTerm(): number {
    return this.term(this.lastIndex());
  }

  /** Term at i; throws RAFT_COMPACTED below the first index - 1 and RAFT_UNAVAILABLE past the last. */
  term(i: number): number {
    const ut = this.unstable.maybeTerm(i);
    if (ut !== undefined) return ut;
    const dummy = this.firstIndex() - 1;
    if (i < dummy) throw new RaftError('RAFT_COMPACTED', 'raft: requested index is unavailable due to compaction');
    if (i > this.lastIndex()) throw new RaftError('RAFT_UNAVAILABLE', 'raft: requested entry at index is unavailable');
    return this.storage.term(i);
  }

  /**
   * Term at i, or 0 when i is compacted or beyond the log. Checks bounds first: this sits on hot paths
   * (every append and vote), where throwing and catching would cost a stack trace each time.
   */
  zeroTermOnOutOfBounds(i: number): number {
    const ut = this.unstable.maybeTerm(i);
    if (ut !== undefined) return ut;
    if (i < this.firstIndex() - 1 || i > this.lastIndex()) return 0;
    try {
      return this.storage.term(i);
    } catch (e) {
      // Storage compacted past its own snapshot between our bounds check and the read.
      if (e instanceof RaftError && (e.code === 'RAFT_COMPACTED' || e.code === 'RAFT_UNAVAILABLE')) return 0;
      throw e;
    }
  }

  matchTerm(i: number, t: number): boolean {
    return this.zeroTermOnOutOfBounds(i) === t;
  }

  /**
   * A follower's append: if the entry preceding `ents` matches (index, logTerm), append the entries
   * (truncating a conflicting suffix) and advance commit. Returns the last new index, or -1 on mismatch.
   */
  maybeAppend(index: number, logTerm: number, committed: number, ents: readonly Entry[]): number {
    if (!this.matchTerm(index, logTerm)) return -1;
    const lastNew = index + ents.length;
    const ci = this.findConflict(ents);
    if (ci !== 0) {
      invariant(ci > this.committed, `entry ${ci} conflicts with committed entry [committed(${this.committed})]`);
      const offset = index + 1;
      this.append(ents.slice(ci - offset));
    }
    this.commitTo(Math.min(committed, lastNew));
    return lastNew;
  }

  append(ents: readonly Entry[]): number {
    const first = ents[0];
    if (!first) return this.lastIndex();
    invariant(first.index - 1 >= this.committed, `after(${first.index - 1}) is out of range [committed(${this.committed})]`);
    this.unstable.truncateAndAppend(ents);
    return this.lastIndex();
  }

  /**
   * The index of the first entry that is new or conflicts with an existing one (0 if all are present).
   * A conflict is an existing index with a different term.
   */
  findConflict(ents: readonly Entry[]): number {
    for (const e of ents) {
      if (!this.matchTerm(e.index, e.term)) return e.index;
    }
    return 0;
  }

  /**
   * Fast back-off: the largest index <= `index` whose term is <= `term` (or the first index - 1 if the log
   * was compacted there). Used by a follower to hint, and by the leader to jump, past a whole
   * conflicting term in one round trip.
   */
  findConflictByTerm(index: number, term: number): [number, number] {
    for (let i = index; i >= 0; i--) {
      let t: number;
      try {
        t = this.term(i);
      } catch {
        return [i, 0];
      }
      if (t <= term) return [i, t];
    }
    return [0, 0];
  }

  /** Whether a candidate whose last entry is (lasti, term) is at least as up to date as this log. */
  isUpToDate(lasti: number, term: number): boolean {
    const lt = this.lastTerm();
    return term > lt || (term === lt && lasti >= this.lastIndex());
  }

  commitTo(tocommit: number): void {
    if (this.committed < tocommit) {
      invariant(this.lastIndex() >= tocommit, `tocommit(${tocommit}) is out of range [lastIndex(${this.lastIndex()})]`);
      this.committed = tocommit;
    }
  }

  /** Leader: commit maxIndex if it is newer and from the given (current) term. */
  maybeCommit(maxIndex: number, term: number): boolean {
    if (maxIndex > this.committed && this.zeroTermOnOutOfBounds(maxIndex) === term) {
      this.commitTo(maxIndex);
      return true;
    }
    return false;
  }

  appliedTo(i: number): void {
    if (i === 0) return;
    invariant(this.committed >= i && i >= this.applied, `applied(${i}) is out of range [prevApplied(${this.applied}), committed(${this.committed})]`);
    this.applied = i;
    this.applying = Math.max(this.applying, i);
  }

  restore(s: Snapshot): void {
    this.committed = s.metadata.index;
    this.unstable.restore(s);
  }

  snapshot(): Snapshot {
    return this.unstable.snapshot ?? this.storage.snapshot();
  }

  hasNextOrInProgressSnapshot(): boolean {
    return this.unstable.snapshot !== undefined;
  }

  /** Entries in [lo, hi) from storage and the unstable tail, limited to maxSize bytes (at least one). */
  slice(lo: number, hi: number, maxSize: number): Entry[] {
    if (lo === hi) return [];
    const first = this.firstIndex();
    if (lo < first) throw new RaftError('RAFT_COMPACTED', 'raft: requested index is unavailable due to compaction');
    invariant(hi <= this.lastIndex() + 1, `slice[${lo},${hi}) out of bound [${first},${this.lastIndex()}]`);
    let ents: Entry[] = [];
    const uOffset = this.unstable.offset;
    if (lo < uOffset) {
      ents = this.storage.entries(lo, Math.min(hi, uOffset), maxSize);
      // Storage stopped early because of the size limit: don't add unstable entries.
      if (ents.length < Math.min(hi, uOffset) - lo) return ents;
    }
    if (hi > uOffset) {
      const u = this.unstable.slice(Math.max(lo, uOffset), hi);
      ents = ents.length > 0 ? ents.concat(u) : u;
    }
    return limitSize(ents, maxSize);
  }

  /** Entries from i to the end, limited to maxSize. */
  entries(i: number, maxSize: number): Entry[] {
    if (i > this.lastIndex()) return [];
    return this.slice(i, this.lastIndex() + 1, maxSize);
  }

  nextUnstableEnts(): Entry[] {
    return this.unstable.nextEntries();
  }

  hasNextUnstableEnts(): boolean {
    return this.unstable.offsetInProgress < this.unstable.offset + this.unstable.entries.length;
  }

  /** Committed entries not yet handed out for applying, capped at maxApplyingEntsSize. */
  nextCommittedEnts(): Entry[] {
    if (this.unstable.snapshot) return []; // apply the snapshot first
    const lo = this.applying + 1;
    const hi = this.committed + 1;
    if (lo >= hi) return [];
    return this.slice(lo, hi, this.maxApplyingEntsSize);
  }

  hasNextCommittedEnts(): boolean {
    return !this.unstable.snapshot && this.committed > this.applying;
  }

  /** Marks entries up to i as handed out for applying. */
  acceptApplying(i: number): void {
    this.applying = Math.max(this.applying, i);
  }

  /** Total payload of a batch of entries (for the uncommitted-size limit). */
  static payloadSize(ents: readonly Entry[]): number {
    let s = 0;
    for (const e of ents) s += entryPayloadSize(e);
    return s;
  }

  static byteSize(ents: readonly Entry[]): number {
    let s = 0;
    for (const e of ents) s += entrySize(e);
    return s;
  }
}
