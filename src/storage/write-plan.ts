// Turns one write (a Ready, a snapshot, a compaction) into LevelDB batch operations. Planning works on the
// log's shape — a few numbers — rather than on the mirror, so several Readies can be planned one after
// another into a single group-commit batch before any of them reaches the mirror. Every check that can
// refuse a write runs here, before anything is written: a refused write leaves disk and mirror untouched.
import type { ConfState, Entry, HardState, Ready, SnapshotMetadata } from '../raft/types.js';
import { errCompacted, errSnapOutOfDate, invariant } from '../raft/errors.js';
import { CONF_STATE_KEY, HARD_STATE_KEY, LOG_START_KEY, SNAPSHOT_KEY, logKey, snapChunkKey } from './keys.js';
import { confStateCodec, hardStateCodec, logStartCodec, sealBytes, sealEntry, snapshotCodec } from './records.js';

export type BatchOp =
  | { readonly type: 'put'; readonly key: Uint8Array; readonly value: Uint8Array }
  | { readonly type: 'del'; readonly key: Uint8Array };

/** What planning needs to know about the log as it will be once every earlier planned write has landed. */
export interface LogShape {
  /** Index of the entry before the first kept one (compaction / snapshot point). */
  readonly offset: number;
  readonly last: number;
  readonly snapIndex: number;
  readonly snapChunks: number;
  readonly commit: number;
}

export interface Plan {
  readonly ops: BatchOp[];
  readonly shape: LogShape;
  readonly sync: boolean;
}

/** What a save takes from a Ready: exactly the parts that are persisted. */
export type ReadyToSave = Pick<Ready, 'hardState' | 'entries' | 'snapshot' | 'mustSync'>;

const put = (ops: BatchOp[], key: Uint8Array, value: Uint8Array): void => {
  ops.push({ type: 'put', key, value });
};
const del = (ops: BatchOp[], key: Uint8Array): void => {
  ops.push({ type: 'del', key });
};

function deleteEntries(ops: BatchOp[], from: number, to: number): void {
  for (let i = from; i <= to; i++) del(ops, logKey(i));
}

/**
 * Writes snapshot metadata and data (in chunks, so a large state blob never becomes one huge LevelDB value)
 * and deletes the previous snapshot's surplus chunks: only the latest snapshot is kept. Returns the chunk count.
 */
export function putSnapshot(ops: BatchOp[], meta: SnapshotMetadata, data: Uint8Array, chunkSize: number, oldChunks: number): number {
  const chunks = Math.ceil(data.length / chunkSize);
  for (let c = 0; c < chunks; c++) {
    const key = snapChunkKey(c);
    put(ops, key, sealBytes(key, data.subarray(c * chunkSize, (c + 1) * chunkSize)));
  }
  for (let c = chunks; c < oldChunks; c++) del(ops, snapChunkKey(c));
  put(ops, SNAPSHOT_KEY, snapshotCodec.seal(SNAPSHOT_KEY, { ...meta, size: data.length, chunks }));
  return chunks;
}

/**
 * One Ready, in the order the core expects it applied: an incoming snapshot replaces the log, then the
 * entries are appended (a conflicting suffix beyond them is deleted), then the hard state. Same semantics
 * as MemoryStorage.applySnapshot / append / setHardState, with the same errors.
 */
export function planSave(shape: LogShape, rd: ReadyToSave, confState: ConfState | undefined, chunkSize: number): Plan {
  let { offset, last, snapIndex, snapChunks, commit } = shape;
  const ops: BatchOp[] = [];

  if (rd.snapshot) {
    const m = rd.snapshot.metadata;
    if (m.index <= snapIndex) throw errSnapOutOfDate();
    deleteEntries(ops, offset + 1, last);
    snapChunks = putSnapshot(ops, m, rd.snapshot.data, chunkSize, snapChunks);
    put(ops, LOG_START_KEY, logStartCodec.seal(LOG_START_KEY, { index: m.index, term: m.term }));
    // The configuration came with the snapshot; an older applied-index configuration no longer applies.
    del(ops, CONF_STATE_KEY);
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
      for (let i = from; i <= newLast; i++) {
        const key = logKey(i);
        put(ops, key, sealEntry(key, ents[i - head.index] as Entry));
      }
      deleteEntries(ops, newLast + 1, last);
      last = newLast;
    }
  }

  const hs: HardState | undefined = rd.hardState;
  if (hs) {
    put(ops, HARD_STATE_KEY, hardStateCodec.seal(HARD_STATE_KEY, hs));
    commit = hs.commit;
  }
  // Reopening checks this too; refusing it here keeps a bad write from making the directory unopenable.
  invariant(commit <= last, `commit ${commit} would be beyond the last index ${last}`);
  if (confState) put(ops, CONF_STATE_KEY, confStateCodec.seal(CONF_STATE_KEY, confState));

  // A snapshot or a configuration is acknowledged to others (appResp, membership) once saved: sync them too.
  const sync = rd.mustSync || rd.snapshot !== undefined || confState !== undefined;
  return { ops, shape: { offset, last, snapIndex, snapChunks, commit }, sync };
}

/** Compaction: entries up to and including `index` go; `index` stays as the log start with its term. */
export function planCompact(shape: LogShape, index: number, termOf: (i: number) => number): Plan {
  if (index <= shape.offset) throw errCompacted();
  invariant(index <= shape.last, `compact ${index} is out of bound lastindex(${shape.last})`);
  // Entries past the snapshot are the only copy of that part of the state: the snapshot must cover them first.
  invariant(index <= shape.snapIndex, `compact ${index} is beyond the snapshot at ${shape.snapIndex}`);
  const ops: BatchOp[] = [];
  deleteEntries(ops, shape.offset + 1, index);
  put(ops, LOG_START_KEY, logStartCodec.seal(LOG_START_KEY, { index, term: termOf(index) }));
  // Not synced: LevelDB's log is ordered, so a lost compaction can only bring entries back, never lose them.
  return { ops, shape: { ...shape, offset: index }, sync: false };
}
