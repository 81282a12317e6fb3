// The core's read-only view of stable storage, and MemoryStorage: the in-memory implementation used by
// tests, the simulation and (as a cache in front of the durable log) the server.
import type { ConfState, Entry, HardState, NodeId, Snapshot } from './types.js';
import { errCompacted, errSnapOutOfDate, errUnavailable, invariant } from './errors.js';
import { NONE, entrySize } from './types.js';

export interface InitialState {
  readonly hardState: HardState;
  readonly confState: ConfState;
}

/**
 * What the core reads from stable storage. Everything here has been persisted by the application; the
 * core never writes through this interface. Errors are RaftError with code RAFT_COMPACTED / RAFT_UNAVAILABLE.
 */
export interface Storage {
  initialState(): InitialState;
  /** Entries in [lo, hi), at least one if any exist, at most `maxSize` bytes beyond the first. */
  entries(lo: number, hi: number, maxSize: number): Entry[];
  /** Term of entry i; valid for firstIndex()-1 (the snapshot's term) through lastIndex(). */
  term(i: number): number;
  firstIndex(): number;
  lastIndex(): number;
  snapshot(): Snapshot;
}

export const EMPTY_CONF_STATE: ConfState = { voters: [], learners: [] };
const EMPTY_HARD_STATE: HardState = { term: 0, vote: NONE, commit: 0 };

export function emptySnapshot(): Snapshot {
  return { metadata: { index: 0, term: 0, confState: EMPTY_CONF_STATE }, data: new Uint8Array(0) };
}

/** Keeps entries whose cumulative size stays within maxSize; always keeps the first. */
export function limitSize(ents: Entry[], maxSize: number): Entry[] {
  if (ents.length === 0) return ents;
  let size = entrySize(ents[0] as Entry);
  let limit = 1;
  for (; limit < ents.length; limit++) {
    size += entrySize(ents[limit] as Entry);
    if (size > maxSize) break;
  }
  return limit === ents.length ? ents : ents.slice(0, limit);
}

export class MemoryStorage implements Storage {
  private hardState: HardState = EMPTY_HARD_STATE;
  /** The configuration as of the application's applied index, if it keeps one (else the snapshot's). */
  private confState: ConfState | undefined;
  private snap: Snapshot = emptySnapshot();
  // ents[0] is a dummy holding the snapshot's index and term; ents[i] has index ents[0].index + i.
  private ents: Entry[] = [{ term: 0, index: 0, type: 'normal', data: new Uint8Array(0) }];

  initialState(): InitialState {
    return { hardState: this.hardState, confState: this.confState ?? this.snap.metadata.confState };
  }

  /**
   * Records the configuration in force at the application's applied index. An application that restarts
   * with `applied` beyond the snapshot must keep this too, since conf changes up to `applied` are not
   * replayed to the core.
   */
  setConfState(cs: ConfState): void {
    this.confState = cs;
  }

  setHardState(hs: HardState): void {
    this.hardState = hs;
  }

  getHardState(): HardState {
    return this.hardState;
  }

  private get offset(): number {
    return (this.ents[0] as Entry).index;
  }

  entries(lo: number, hi: number, maxSize: number): Entry[] {
    const offset = this.offset;
    if (lo <= offset) throw errCompacted();
    if (hi > this.lastIndex() + 1) throw errUnavailable();
    if (this.ents.length === 1) throw errUnavailable(); // only the dummy entry
    return limitSize(this.ents.slice(lo - offset, hi - offset), maxSize);
  }

  term(i: number): number {
    const offset = this.offset;
    if (i < offset) throw errCompacted();
    if (i - offset >= this.ents.length) throw errUnavailable();
    return (this.ents[i - offset] as Entry).term;
  }

  firstIndex(): number {
    return this.offset + 1;
  }

  lastIndex(): number {
    return this.offset + this.ents.length - 1;
  }

  snapshot(): Snapshot {
    return this.snap;
  }

  /** Replaces the contents with a snapshot (a follower installing one it received). */
  applySnapshot(snap: Snapshot): void {
    if (this.snap.metadata.index >= snap.metadata.index) throw errSnapOutOfDate();
    this.snap = snap;
    this.confState = undefined;
    this.ents = [{ term: snap.metadata.term, index: snap.metadata.index, type: 'normal', data: new Uint8Array(0) }];
  }

  /**
   * Records a snapshot of the application state at index i (which must be applied), so the log can be
   * compacted up to it. `cs` is the configuration at i.
   */
  createSnapshot(i: number, cs: ConfState | undefined, data: Uint8Array): Snapshot {
    if (i <= this.snap.metadata.index) throw errSnapOutOfDate();
    invariant(i <= this.lastIndex(), `snapshot ${i} is out of bound lastindex(${this.lastIndex()})`);
    const term = this.term(i);
    this.snap = { metadata: { index: i, term, confState: cs ?? this.snap.metadata.confState }, data };
    return this.snap;
  }

  /** Discards entries up to and including compactIndex. The application must not compact past applied. */
  compact(compactIndex: number): void {
    const offset = this.offset;
    if (compactIndex <= offset) throw errCompacted();
    invariant(compactIndex <= this.lastIndex(), `compact ${compactIndex} is out of bound lastindex(${this.lastIndex()})`);
    const i = compactIndex - offset;
    const head = this.ents[i] as Entry;
    this.ents = [{ term: head.term, index: head.index, type: 'normal', data: new Uint8Array(0) }, ...this.ents.slice(i + 1)];
  }

  /** Appends entries, truncating any conflicting suffix. Entries must be contiguous. */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = this.firstIndex();
    const last = (entries[0] as Entry).index + entries.length - 1;
    if (last < first) return; // entirely compacted already
    // Drop the part that is already compacted.
    let ents = entries;
    if (first > (entries[0] as Entry).index) ents = entries.slice(first - (entries[0] as Entry).index);
    const offset = (ents[0] as Entry).index - this.offset;
    invariant(offset <= this.ents.length, `missing log entry [last: ${this.lastIndex()}, append at: ${(ents[0] as Entry).index}]`);
    if (offset < this.ents.length) this.ents.length = offset; // truncate the conflicting suffix
    for (const e of ents) this.ents.push(e);
  }
}

/** A fresh member's storage for a new cluster: a snapshot at index 1 that holds the initial configuration. */
export function bootstrapStorage(voters: readonly NodeId[], learners: readonly NodeId[] = []): MemoryStorage {
  const s = new MemoryStorage();
  s.applySnapshot({ metadata: { index: 1, term: 1, confState: { voters: [...voters], learners: [...learners] } }, data: new Uint8Array(0) });
  s.setHardState({ term: 1, vote: NONE, commit: 1 });
  return s;
}
