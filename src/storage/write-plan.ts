// Turns one write (a Ready, a snapshot, a compaction) into write-ahead log records. Planning works on the
// log's shape — a few numbers — rather than on the mirror, so several Readies can be planned one after
// another into a single group-commit write before any of them reaches the mirror. Every check that can
// refuse a write runs here, before anything is written: a refused write leaves disk and mirror untouched.
import type { ConfState, Entry, HardState, Ready, SnapshotMetadata } from '../raft/types.js';
import { errCompacted, errSnapOutOfDate, invariant } from '../raft/errors.js';
import type { StoredSnapshot } from './records.js';
import { compactCodec, confStateClearCodec, confStateCodec, dataChecksum, frameEntryParts, hardStateCodec, resetCodec, snapshotCodec } from './records.js';

/** What planning needs to know about the log as it will be once every earlier planned write has landed. */
export interface LogShape {
  /** Index of the entry before the first kept one (compaction / snapshot point). */
  readonly offset: number;
  readonly last: number;
  readonly snapIndex: number;
  readonly commit: number;
}

/** A snapshot whose data file must be on disk before the records naming it are written. */
export interface SnapshotFile {
  readonly stored: StoredSnapshot;
  readonly data: Uint8Array;
}

export interface Plan {
  /** The bytes to write, in pieces written one after the other (an entry's data is not copied). */
  readonly records: Uint8Array[];
  readonly shape: LogShape;
  readonly sync: boolean;
  /** The highest entry index the records write (0: none). */
  readonly maxIndex: number;
  /** The records replace the whole log (an installed snapshot). */
  readonly reset: boolean;
  readonly snapshotFile?: SnapshotFile;
}

/** What a save takes from a Ready: exactly the parts that are persisted. */
export type ReadyToSave = Pick<Ready, 'hardState' | 'entries' | 'snapshot' | 'mustSync'>;

export function storedSnapshot(meta: SnapshotMetadata, data: Uint8Array): StoredSnapshot {
  return { ...meta, size: data.length, crc: dataChecksum(data) };
}

/**
 * One Ready, in the order the core expects it applied: an incoming snapshot replaces the log, then the
 * entries are appended (a conflicting suffix beyond them is dropped), then the hard state. Same semantics
 * as MemoryStorage.applySnapshot / append / setHardState, with the same errors.
 */
export function planSave(shape: LogShape, rd: ReadyToSave, confState: ConfState | undefined): Plan {
  let { offset, last, snapIndex, commit } = shape;
  const records: Uint8Array[] = [];
  let snapshotFile: SnapshotFile | undefined;
  let maxIndex = 0;

  if (rd.snapshot) {
    const m = rd.snapshot.metadata;
    if (m.index <= snapIndex) throw errSnapOutOfDate();
    snapshotFile = { stored: storedSnapshot(m, rd.snapshot.data), data: rd.snapshot.data };
    records.push(snapshotCodec.frame(snapshotFile.stored));
    records.push(resetCodec.frame({ index: m.index, term: m.term }));
    // The configuration came with the snapshot; an older applied-index configuration no longer applies.
    records.push(confStateClearCodec.frame({}));
    offset = last = snapIndex = m.index;
  }

  const ents = rd.entries;
  const head = ents[0];
  if (head !== undefined) {
    const newLast = head.index + ents.length - 1;
    for (let k = 1; k < ents.length; k++) invariant((ents[k] as Entry).index === head.index + k, `entries to save are not contiguous at ${head.index + k}`);
    // Entries at or below the offset are compacted already: skip them, as MemoryStorage.append does.
    if (newLast > offset) {
      const from = Math.max(head.index, offset + 1);
      invariant(from <= last + 1, `missing log entry [last: ${last}, append at: ${from}]`);
      for (let i = from; i <= newLast; i++) frameEntryParts(ents[i - head.index] as Entry, records);
      last = newLast;
      maxIndex = newLast;
    }
  }

  const hs: HardState | undefined = rd.hardState;
  if (hs) {
    records.push(hardStateCodec.frame(hs));
    commit = hs.commit;
  }
  // Reopening checks this too; refusing it here keeps a bad write from making the directory unopenable.
  invariant(commit <= last, `commit ${commit} would be beyond the last index ${last}`);
  if (confState) records.push(confStateCodec.frame(confState));

  // A snapshot or a configuration is acknowledged to others (appResp, membership) once saved: sync them too.
  const sync = rd.mustSync || rd.snapshot !== undefined || confState !== undefined;
  return { records, shape: { offset, last, snapIndex, commit }, sync, maxIndex, reset: rd.snapshot !== undefined, ...(snapshotFile ? { snapshotFile } : {}) };
}

/** Compaction: entries up to and including `index` go; `index` stays as the log start with its term. */
export function planCompact(shape: LogShape, index: number, termOf: (i: number) => number): Plan {
  if (index <= shape.offset) throw errCompacted();
  invariant(index <= shape.last, `compact ${index} is out of bound lastindex(${shape.last})`);
  // Entries past the snapshot are the only copy of that part of the state: the snapshot must cover them first.
  invariant(index <= shape.snapIndex, `compact ${index} is beyond the snapshot at ${shape.snapIndex}`);
  // Synced: segments the compaction empties are deleted right after, and must not come back without it.
  return { records: [compactCodec.frame({ index, term: termOf(index) })], shape: { ...shape, offset: index }, sync: true, maxIndex: 0, reset: false };
}
