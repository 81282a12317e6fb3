// Recovery: replays every segment of the write-ahead log, in order, into the state the writer had, and
// rebuilds the in-memory mirror the core reads through, checking on the way that the records agree with
// each other. Anything that does not is reported as STORAGE_CORRUPT naming the segment and the offset;
// nothing is repaired or dropped silently — except a torn write at the very end of the last segment,
// which a crash mid-write leaves and which was never acknowledged.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ConfState, Entry, HardState, Snapshot } from '../raft/types.js';
import { EMPTY_CONF_STATE, MemoryStorage } from '../raft/storage.js';
import { errCorrupt, errVersion, ioError } from './errors.js';
import type { LogStart, StoredSnapshot } from './records.js';
import {
  BadRecord,
  FORMAT_MAGIC,
  FORMAT_VERSION,
  RecordType,
  compactCodec,
  confStateClearCodec,
  confStateCodec,
  dataChecksum,
  formatCodec,
  hardStateCodec,
  openEntry,
  readFrame,
  resetCodec,
  segmentFileName,
  snapshotCodec,
  snapshotFileName,
} from './records.js';
import type { SegmentInfo, Tail } from './wal.js';

export interface LoadedState {
  readonly mirror: MemoryStorage;
  /** The snapshot's stored form (its data file's size and checksum), if there is one. */
  readonly snapshot: StoredSnapshot | undefined;
  /** The configuration recorded at the applied index, if one is in force. */
  readonly confState: ConfState | undefined;
  readonly segments: SegmentInfo[];
  readonly tail: Tail;
}

/** Sector size for telling a torn write from damage: a write that did not land leaves whole zero sectors. */
const SECTOR = 512;

/** True if some sector-aligned stretch of [from, to) is all zeros: the mark of a write cut short by a crash. */
function hasZeroSector(buf: Buffer, from: number, to: number): boolean {
  for (let s = Math.floor(from / SECTOR) * SECTOR; s < to; s += SECTOR) {
    const a = Math.max(s, from);
    const b = Math.min(s + SECTOR, to);
    if (b > a && buf.subarray(a, b).every((x) => x === 0)) return true;
  }
  return false;
}

/** The writer's state, rebuilt record by record with the same meaning the writer gave each record. */
class Replay {
  hs: HardState = { term: 0, vote: 0n, commit: 0 };
  cs: ConfState | undefined;
  snap: StoredSnapshot | undefined;
  offset = 0;
  offsetTerm = 0;
  last = 0;
  /** Sparse while replaying: segments deleted after compaction leave holes below the final offset. */
  readonly ents = new Map<number, Entry>();

  /** Applies one record; returns the entry index it wrote, or 0. Throws BadRecord if it cannot stand. */
  apply(type: number, payload: Buffer): number {
    switch (type) {
      case RecordType.entry: {
        const e = openEntry(payload);
        if (e.index <= this.offset) throw new BadRecord(`entry ${e.index} is at or below the log start ${this.offset}`);
        for (let i = e.index; i <= this.last; i++) this.ents.delete(i);
        this.ents.set(e.index, e);
        this.last = e.index;
        return e.index;
      }
      case RecordType.hardState:
        this.hs = hardStateCodec.open(payload);
        return 0;
      case RecordType.confState:
        this.cs = confStateCodec.open(payload);
        return 0;
      case RecordType.confStateClear:
        confStateClearCodec.open(payload);
        this.cs = undefined;
        return 0;
      case RecordType.compact: {
        const c = compactCodec.open(payload);
        if (c.index < this.offset) throw new BadRecord(`compaction to ${c.index} goes back before the log start ${this.offset}`);
        for (let i = this.offset + 1; i <= c.index; i++) this.ents.delete(i);
        this.setStart(c, Math.max(this.last, c.index));
        return 0;
      }
      case RecordType.reset: {
        const r = resetCodec.open(payload);
        this.ents.clear();
        this.setStart(r, r.index);
        return 0;
      }
      case RecordType.snapshot:
        this.snap = snapshotCodec.open(payload);
        return 0;
      default:
        throw new BadRecord(`unknown record type ${type}`);
    }
  }

  private setStart(start: LogStart, last: number): void {
    this.offset = start.index;
    this.offsetTerm = start.term;
    this.last = last;
  }
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

async function readFileOrCorrupt(dir: string, name: string, what: string): Promise<Buffer> {
  try {
    return await fs.readFile(path.join(dir, name));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw errCorrupt(dir, `${what} (${name}) is missing`);
    throw ioError(dir, `reading ${name}`, e);
  }
}

async function readSnapshotData(dir: string, snap: StoredSnapshot): Promise<Uint8Array> {
  const name = snapshotFileName(snap.index);
  const data = await readFileOrCorrupt(dir, name, `the data file of snapshot ${snap.index}`);
  if (data.length !== snap.size) throw errCorrupt(dir, `${name}: snapshot ${snap.index} data is ${data.length} bytes, its record says ${snap.size}`);
  if (dataChecksum(data) !== snap.crc) throw errCorrupt(dir, `${name}: snapshot ${snap.index} data does not match its checksum`);
  return data;
}

/** Replays one segment; returns where its records end and whether they end in a torn write. */
function replaySegment(dir: string, seq: number, buf: Buffer, isLast: boolean, replay: Replay, segments: readonly SegmentInfo[]): { end: number; torn: boolean } {
  const info = segments[segments.length - 1] as SegmentInfo;
  const name = segmentFileName(seq);
  let at = 0;
  for (;;) {
    const f = readFrame(buf, at);
    if (f.kind === 'end') {
      if (at === 0) throw errCorrupt(dir, `${name} has no header record`);
      return { end: at, torn: false };
    }
    if (f.kind === 'bad') {
      // Only the last segment's last write can be cut short by a crash; it reaches the end of the file or
      // left a sector unwritten. Anything else is damage to data that was once written whole.
      if (isLast && at > 0 && (f.until === buf.length || hasZeroSector(buf, at, f.until))) return { end: at, torn: true };
      throw errCorrupt(dir, `${name} at offset ${at}: ${f.why}`);
    }
    try {
      if (at === 0) checkHeader(dir, name, seq, f.type, f.payload);
      else if (f.type === RecordType.format) throw new BadRecord('a second header record');
      else {
        // A reset makes every entry written so far obsolete, as WalWriter.forgetEntries does.
        if (f.type === RecordType.reset) for (const s of segments) s.maxIndex = 0;
        const index = replay.apply(f.type, f.payload);
        if (index > info.maxIndex) info.maxIndex = index;
      }
    } catch (e) {
      if (e instanceof BadRecord) throw errCorrupt(dir, `${name} at offset ${at}: ${e.message}`, e);
      throw e;
    }
    at = f.next;
  }
}

function checkHeader(dir: string, name: string, seq: number, type: number, payload: Buffer): void {
  if (type !== RecordType.format) throw new BadRecord(`the first record has type ${type}, not a header`);
  const h = formatCodec.open(payload);
  if (h.magic !== FORMAT_MAGIC) throw new BadRecord(`the header has magic ${JSON.stringify(h.magic)}`);
  if (h.version !== FORMAT_VERSION) throw errVersion(dir, h.version, FORMAT_VERSION);
  if (h.seq !== seq) throw new BadRecord(`the header says segment ${h.seq}`);
}

/** Replays the segments `seqs` (ascending, as found in the directory) and loads the snapshot they name. */
export async function loadRaftState(dir: string, seqs: readonly number[]): Promise<LoadedState> {
  if (seqs.length === 0) throw errCorrupt(dir, 'there are no log segments (*.wal)');
  const replay = new Replay();
  const segments: SegmentInfo[] = [];
  let tail: Tail | undefined;
  for (const [k, seq] of seqs.entries()) {
    if (k > 0 && seq !== (seqs[k - 1] as number) + 1) throw errCorrupt(dir, `log segment ${segmentFileName((seqs[k - 1] as number) + 1)} is missing`);
    const buf = await readFileOrCorrupt(dir, segmentFileName(seq), `log segment ${seq}`);
    const isLast = k === seqs.length - 1;
    segments.push({ seq, maxIndex: 0 });
    const { end, torn } = replaySegment(dir, seq, buf, isLast, replay, segments);
    if (isLast) tail = { seq, end, size: buf.length, torn };
  }

  const entries: Entry[] = [];
  for (let i = replay.offset + 1; i <= replay.last; i++) {
    const e = replay.ents.get(i);
    if (e === undefined) throw errCorrupt(dir, `gap in the log: entry ${i} is missing (the log runs from ${replay.offset + 1} to ${replay.last})`);
    entries.push(e);
  }
  const stored = replay.snap;
  const snap: Snapshot = stored
    ? { metadata: { index: stored.index, term: stored.term, confState: stored.confState }, data: await readSnapshotData(dir, stored) }
    : { metadata: { index: 0, term: 0, confState: EMPTY_CONF_STATE }, data: new Uint8Array(0) };
  const mirror = buildMirror(dir, replay.hs, { index: replay.offset, term: replay.offsetTerm }, snap, entries);
  // Only a recorded conf state overrides the snapshot's, as in MemoryStorage.initialState().
  if (replay.cs !== undefined) mirror.setConfState(replay.cs);
  return { mirror, snapshot: stored, confState: replay.cs, segments, tail: tail as Tail };
}
