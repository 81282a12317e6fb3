// Recovery: reads everything the raft data directory holds and rebuilds the in-memory mirror the core reads
// through, checking on the way that the records agree with each other. Anything that does not is reported
// as STORAGE_CORRUPT naming the record; nothing is repaired or dropped silently.
import type { ClassicLevel } from 'classic-level';
import type { Entry, HardState, Snapshot } from '../raft/types.js';
import { EMPTY_CONF_STATE, MemoryStorage } from '../raft/storage.js';
import { errCorrupt } from './errors.js';
import {
  CONF_STATE_KEY,
  HARD_STATE_KEY,
  LOG_FIRST,
  LOG_LAST,
  LOG_START_KEY,
  SNAPSHOT_KEY,
  describeKey,
  logIndexOf,
  snapChunkKey,
} from './keys.js';
import type { LogStart, StoredSnapshot } from './records.js';
import type { MetaCodec } from './records.js';
import { BadRecord, confStateCodec, hardStateCodec, logStartCodec, openBytes, openEntry, snapshotCodec } from './records.js';

export type RaftDb = ClassicLevel<Uint8Array, Uint8Array>;

export interface LoadedState {
  readonly mirror: MemoryStorage;
  /** How many data chunks the current snapshot has on disk, so the next snapshot can delete the surplus. */
  readonly snapChunks: number;
}

/** Runs a decoder, turning a BadRecord into STORAGE_CORRUPT that names the directory and the record. */
export function decodeOrCorrupt<T>(dir: string, key: Uint8Array, decode: () => T): T {
  try {
    return decode();
  } catch (e) {
    if (e instanceof BadRecord) throw errCorrupt(dir, `${describeKey(key)}: ${e.message}`, e);
    throw e;
  }
}

async function readRecord<T>(db: RaftDb, dir: string, key: Uint8Array, codec: MetaCodec<T>): Promise<T | undefined> {
  const value = await db.get(key);
  if (value === undefined) return undefined;
  return decodeOrCorrupt(dir, key, () => codec.open(key, value));
}

async function readSnapshotData(db: RaftDb, dir: string, snap: StoredSnapshot): Promise<Uint8Array> {
  const keys = Array.from({ length: snap.chunks }, (_, i) => snapChunkKey(i));
  const values = await db.getMany(keys);
  const parts: Uint8Array[] = [];
  for (const [i, key] of keys.entries()) {
    const v = values[i];
    if (v === undefined) throw errCorrupt(dir, `snapshot ${snap.index} has ${snap.chunks} data chunks but chunk ${i} is missing`);
    parts.push(decodeOrCorrupt(dir, key, () => openBytes(key, v)));
  }
  const data = Buffer.concat(parts);
  if (data.length !== snap.size) throw errCorrupt(dir, `snapshot ${snap.index} data is ${data.length} bytes, its metadata says ${snap.size}`);
  return data;
}

/** Every log entry on disk, which must run without a gap from just after the log start. */
async function readLog(db: RaftDb, dir: string, start: LogStart): Promise<Entry[]> {
  const out: Entry[] = [];
  const it = db.iterator({ gte: LOG_FIRST, lte: LOG_LAST });
  try {
    for (;;) {
      const page = await it.nextv(1024);
      if (page.length === 0) break;
      for (const [key, value] of page) {
        const index = logIndexOf(key);
        if (index === undefined) throw errCorrupt(dir, `stray ${describeKey(key)} in the log's key range`);
        const want = start.index + 1 + out.length;
        if (index !== want) {
          if (index <= start.index) throw errCorrupt(dir, `log entry ${index} is at or below the log start ${start.index} (a compaction was not applied whole)`);
          throw errCorrupt(dir, out.length === 0 ? `gap in the log: it starts at ${index}, after log start ${start.index}` : `gap in the log: entry ${index} follows entry ${want - 1}`);
        }
        out.push(decodeOrCorrupt(dir, key, () => openEntry(key, index, value)));
      }
    }
  } finally {
    await it.close();
  }
  return out;
}

/**
 * Rebuilds a MemoryStorage from the records. Its public API has no way to set a log start different from
 * the snapshot, so when compaction stopped short of the snapshot the mirror installs a stand-in snapshot
 * at the log start, appends the log, and then re-creates the real snapshot on top — which also proves the
 * stored snapshot's term agrees with the log.
 */
function buildMirror(dir: string, hs: HardState, start: LogStart, snap: Snapshot, entries: readonly Entry[]): MemoryStorage {
  const m = snap.metadata;
  const last = start.index + entries.length;
  if (m.index < start.index) throw errCorrupt(dir, `snapshot ${m.index} is older than the log start ${start.index}: entries between were compacted away`);
  if (m.index > last) throw errCorrupt(dir, `snapshot ${m.index} is beyond the last log index ${last}`);
  if (m.index === start.index && m.term !== start.term) throw errCorrupt(dir, `snapshot ${m.index} has term ${m.term}, the log start there has term ${start.term}`);
  const firstTerm = entries[0]?.term;
  if (firstTerm !== undefined && firstTerm < start.term) throw errCorrupt(dir, `entry ${start.index + 1} has term ${firstTerm}, below the log start's term ${start.term}`);
  if (hs.commit > last) throw errCorrupt(dir, `hard state commit ${hs.commit} is beyond the last log index ${last}`);

  const mirror = new MemoryStorage();
  if (m.index === start.index) {
    if (m.index > 0) mirror.applySnapshot(snap);
    mirror.append(entries);
  } else {
    if (start.index > 0) mirror.applySnapshot({ metadata: { index: start.index, term: start.term, confState: m.confState }, data: new Uint8Array(0) });
    mirror.append(entries);
    const made = mirror.createSnapshot(m.index, m.confState, snap.data);
    if (made.metadata.term !== m.term) throw errCorrupt(dir, `snapshot ${m.index} has term ${m.term}, log entry ${m.index} has term ${made.metadata.term}`);
  }
  mirror.setHardState(hs);
  return mirror;
}

export async function loadRaftState(db: RaftDb, dir: string): Promise<LoadedState> {
  const hs = (await readRecord(db, dir, HARD_STATE_KEY, hardStateCodec)) ?? { term: 0, vote: 0, commit: 0 };
  const cs = await readRecord(db, dir, CONF_STATE_KEY, confStateCodec);
  const start = (await readRecord(db, dir, LOG_START_KEY, logStartCodec)) ?? { index: 0, term: 0 };
  const stored = await readRecord(db, dir, SNAPSHOT_KEY, snapshotCodec);
  const snap: Snapshot = stored
    ? { metadata: { index: stored.index, term: stored.term, confState: stored.confState }, data: await readSnapshotData(db, dir, stored) }
    : { metadata: { index: 0, term: 0, confState: EMPTY_CONF_STATE }, data: new Uint8Array(0) };
  const entries = await readLog(db, dir, start);
  const mirror = buildMirror(dir, hs, start, snap, entries);
  // Only a recorded conf state overrides the snapshot's, as in MemoryStorage.initialState().
  if (cs !== undefined) mirror.setConfState(cs);
  return { mirror, snapChunks: stored?.chunks ?? 0 };
}
