// A data directory that is not ours, is from another version, or is damaged must be refused with a clear
// StorageError — never a crash, never a silent reset. Each refusal is checked twice: opening again gives
// the same answer, so the first attempt neither repaired nor wiped anything.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { ClassicLevel } from 'classic-level';
import { DurableRaftStorage } from '../../src/storage/raft-storage.js';
import { StorageError } from '../../src/storage/errors.js';
import type { StorageErrorCode } from '../../src/storage/errors.js';
import { LOCK_FILE, MARKER_FILE } from '../../src/storage/data-dir.js';
import { RecordType, formatCodec, frameEntry, frameRecord, hardStateCodec, readFrame, segmentFileName } from '../../src/storage/records.js';
import { TempDirs } from './helpers/temp-dirs.js';
import { run } from './helpers/storage-conformance.js';

const dirs = new TempDirs();
afterEach(() => dirs.removeAll());

async function openError(dir: string): Promise<StorageError> {
  let s: DurableRaftStorage | undefined;
  try {
    s = await DurableRaftStorage.open(dir);
  } catch (e) {
    if (e instanceof StorageError) return e;
    throw e;
  }
  await s.close();
  throw new Error(`${dir} opened without an error`);
}

/** Opening fails with `code` and a message matching `what` — twice, so nothing was repaired in between. */
async function expectRefused(dir: string, code: StorageErrorCode, what: RegExp): Promise<void> {
  for (const attempt of [1, 2]) {
    const e = await openError(dir);
    expect({ attempt, code: e.code }).toEqual({ attempt, code });
    expect(e.message).toMatch(what);
  }
}

/**
 * A store with a log of 12 entries, a hard state, a snapshot at 5 and the log compacted to 3. With
 * `segmentBytes` small, the log spans several segments.
 */
async function populated(segmentBytes?: number): Promise<string> {
  const dir = await dirs.make();
  const s = await DurableRaftStorage.open(dir, segmentBytes === undefined ? {} : { segmentBytes });
  for (let i = 1; i <= 12; i += 3) await s.save({ entries: run(i, i + 2, 1), hardState: { term: 1, vote: 1n, commit: i + 1 }, mustSync: true });
  await s.save({ entries: [], hardState: { term: 1, vote: 1n, commit: 10 }, mustSync: true });
  await s.createSnapshot(5, { voters: [1n, 2n, 3n], learners: [] }, new Uint8Array([1, 2, 3, 4, 5, 6]));
  await s.compact(3);
  await s.close();
  return dir;
}

const segmentsOf = async (dir: string): Promise<string[]> => (await fs.readdir(dir)).filter((n) => n.endsWith('.wal')).sort();

interface FrameAt {
  readonly at: number;
  readonly next: number;
  readonly type: number;
  readonly payload: Buffer;
}

/** The records of one segment file, with their offsets, and where they end. */
async function framesOf(file: string): Promise<{ buf: Buffer; frames: FrameAt[]; end: number }> {
  const buf = await fs.readFile(file);
  const frames: FrameAt[] = [];
  let at = 0;
  for (;;) {
    const f = readFrame(buf, at);
    if (f.kind !== 'record') return { buf, frames, end: at };
    frames.push({ at, next: f.next, type: f.type, payload: f.payload });
    at = f.next;
  }
}

/** The segment holding log entry `index`, and that entry's frame. */
async function findEntry(dir: string, index: number): Promise<{ file: string; frame: FrameAt }> {
  for (const name of await segmentsOf(dir)) {
    const file = path.join(dir, name);
    const frame = (await framesOf(file)).frames.find((f) => f.type === RecordType.entry && f.payload.readUInt32BE(5) === index);
    if (frame) return { file, frame };
  }
  throw new Error(`entry ${index} not found`);
}

/** Writes `bytes` after the last record of the last segment, as if the writer had. */
async function appendToLastSegment(dir: string, bytes: Buffer): Promise<void> {
  const file = path.join(dir, (await segmentsOf(dir)).at(-1) as string);
  const { end } = await framesOf(file);
  const fh = await fs.open(file, 'r+');
  await fh.write(bytes, 0, bytes.length, end);
  await fh.close();
}

async function patch(file: string, at: number, bytes: Buffer): Promise<void> {
  const fh = await fs.open(file, 'r+');
  await fh.write(bytes, 0, bytes.length, at);
  await fh.close();
}

/** A pid that is certainly not running any more. */
async function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => p.on('exit', resolve));
  return p.pid as number;
}

describe('directories that are not Setpoint raft data', () => {
  it('a non-empty foreign directory is refused and left exactly as it was', async () => {
    const dir = await dirs.make();
    await fs.writeFile(path.join(dir, 'notes.txt'), 'mine');
    await fs.mkdir(path.join(dir, 'photos'));
    await expectRefused(dir, 'STORAGE_FOREIGN_DIR', /is not a Setpoint raft data directory: .*notes\.txt/);
    expect((await fs.readdir(dir)).sort()).toEqual(['notes.txt', 'photos']);
  });

  it('a regular file where the directory should be is refused', async () => {
    const file = path.join(await dirs.make(), 'data');
    await fs.writeFile(file, 'not a directory');
    await expectRefused(file, 'STORAGE_FOREIGN_DIR', /is a file, not a directory/);
  });

  it("someone else's LevelDB is refused and keeps its data", async () => {
    const dir = await dirs.make();
    const other = new ClassicLevel(dir);
    await other.put('hello', 'world');
    await other.close();
    await expectRefused(dir, 'STORAGE_FOREIGN_DIR', /has no SETPOINT_RAFT marker/);
    const again = new ClassicLevel(dir);
    expect(await again.get('hello')).toBe('world');
    await again.close();
    expect(await fs.readdir(dir)).not.toContain(MARKER_FILE);
  });

  it('a missing or empty directory is created', async () => {
    const dir = path.join(await dirs.make(), 'nested', 'raft');
    const s = await DurableRaftStorage.open(dir);
    expect(s.lastIndex()).toBe(0);
    await s.close();
    expect(await fs.readdir(dir)).toContain(MARKER_FILE);
  });
});

describe('format versions', () => {
  it('a marker file from a newer version is refused before anything is read, naming the newer Setpoint', async () => {
    const dir = await populated();
    await fs.writeFile(path.join(dir, MARKER_FILE), 'setpoint-raft 7\n');
    await expectRefused(dir, 'STORAGE_VERSION', /format version 7; this Setpoint reads version 3: it was written by a newer Setpoint, so run that one on it/);
  });

  it('a directory of the LevelDB format (version 1) is refused, not misread', async () => {
    const dir = await dirs.make();
    await fs.writeFile(path.join(dir, MARKER_FILE), 'setpoint-raft 1\n');
    await fs.writeFile(path.join(dir, 'CURRENT'), 'MANIFEST-000004\n');
    await expectRefused(dir, 'STORAGE_VERSION', /format version 1; this Setpoint reads version 3 and cannot convert it/);
  });

  it('a directory of version 2 (52-bit member ids) is refused, saying how to move its data', async () => {
    const dir = await populated();
    await fs.writeFile(path.join(dir, MARKER_FILE), 'setpoint-raft 2\n');
    await expectRefused(dir, 'STORAGE_VERSION', /format version 2; this Setpoint reads version 3 and cannot convert it \(its member ids are not etcd's 64-bit ids\): copy the keys out with the Setpoint that wrote it .*start this one on empty data directories/);
  });

  it('a segment header from another version is refused', async () => {
    const dir = await populated();
    const file = path.join(dir, (await segmentsOf(dir))[0] as string);
    const header = formatCodec.frame({ magic: 'setpoint-raft', version: 2, seq: 1 });
    expect(header.length).toBe((await framesOf(file)).frames[0]?.next);
    await patch(file, 0, header);
    await expectRefused(dir, 'STORAGE_VERSION', /format version 2; this Setpoint reads version 3/);
  });
});

describe('damaged directories', () => {
  it('a damaged marker file', async () => {
    const dir = await populated();
    await fs.writeFile(path.join(dir, MARKER_FILE), 'garbage');
    await expectRefused(dir, 'STORAGE_CORRUPT', /SETPOINT_RAFT is damaged/);
  });

  it('the log segments gone, the marker left', async () => {
    const dir = await populated();
    for (const name of await segmentsOf(dir)) await fs.rm(path.join(dir, name));
    await expectRefused(dir, 'STORAGE_CORRUPT', /there are no log segments/);
  });

  it('a segment missing between others', async () => {
    const dir = await populated(200);
    const names = await segmentsOf(dir);
    expect(names.length).toBeGreaterThan(3);
    await fs.rm(path.join(dir, names[1] as string));
    await expectRefused(dir, 'STORAGE_CORRUPT', new RegExp(`log segment ${names[1]} is missing`));
  });

  it('a segment whose first record is not a header', async () => {
    const dir = await populated();
    const file = path.join(dir, (await segmentsOf(dir))[0] as string);
    await patch(file, 0, frameRecord(RecordType.compact, Buffer.alloc(formatCodec.frame({ magic: 'setpoint-raft', version: 2, seq: 1 }).length - 9)));
    await expectRefused(dir, 'STORAGE_CORRUPT', /0000000000000001\.wal at offset 0: the first record has type 6, not a header/);
  });

  it('an entry whose bytes changed under its checksum, in an older segment', async () => {
    const dir = await populated(200);
    const { file, frame } = await findEntry(dir, 7);
    expect(file).not.toBe(path.join(dir, (await segmentsOf(dir)).at(-1) as string));
    await patch(file, frame.next - 1, Buffer.from([frame.payload[frame.payload.length - 1]! ^ 0x01]));
    await expectRefused(dir, 'STORAGE_CORRUPT', new RegExp(`${path.basename(file)} at offset ${frame.at}: checksum mismatch`));
  });

  it('an entry whose bytes changed under its checksum, in the last segment: damage, not a torn write', async () => {
    const dir = await populated();
    const { file, frame } = await findEntry(dir, 7);
    await patch(file, frame.next - 1, Buffer.from([frame.payload[frame.payload.length - 1]! ^ 0x01]));
    await expectRefused(dir, 'STORAGE_CORRUPT', new RegExp(`at offset ${frame.at}: checksum mismatch`));
  });

  it('a gap in the log', async () => {
    const dir = await populated();
    const { file, frame } = await findEntry(dir, 7);
    const { buf, end } = await framesOf(file);
    // Cut entry 7 out and close up the rest, as if it had never been written.
    const without = Buffer.concat([buf.subarray(0, frame.at), buf.subarray(frame.next, end), Buffer.alloc(frame.next - frame.at)]);
    await patch(file, 0, without);
    await expectRefused(dir, 'STORAGE_CORRUPT', /gap in the log: entry 7 is missing \(the log runs from 4 to 12\)/);
  });

  it('an entry written below the log start', async () => {
    const dir = await populated();
    await appendToLastSegment(dir, frameEntry(run(2, 2, 1)[0]!));
    await expectRefused(dir, 'STORAGE_CORRUPT', /entry 2 is at or below the log start 3/);
  });

  it('a hard state committing beyond the last index', async () => {
    const dir = await populated();
    await appendToLastSegment(dir, hardStateCodec.frame({ term: 1, vote: 1n, commit: 40 }));
    await expectRefused(dir, 'STORAGE_CORRUPT', /hard state commit 40 is beyond the last log index 12/);
  });

  it('a hard state that does not decode, checksum and all', async () => {
    const dir = await populated();
    await appendToLastSegment(dir, frameRecord(RecordType.hardState, Buffer.from([0xc1, 0xc1])));
    await expectRefused(dir, 'STORAGE_CORRUPT', /undecodable msgpack/);
  });

  it('a record of a type this version does not know', async () => {
    const dir = await populated();
    await appendToLastSegment(dir, frameRecord(99, Buffer.from([1])));
    await expectRefused(dir, 'STORAGE_CORRUPT', /unknown record type 99/);
  });

  it("the snapshot's data file missing", async () => {
    const dir = await populated();
    await fs.rm(path.join(dir, '0000000000000005.snap'));
    await expectRefused(dir, 'STORAGE_CORRUPT', /the data file of snapshot 5 \(0000000000000005\.snap\) is missing/);
  });

  it("the snapshot's data changed", async () => {
    const dir = await populated();
    await fs.writeFile(path.join(dir, '0000000000000005.snap'), Buffer.from([1, 2, 3, 4, 5, 7]));
    await expectRefused(dir, 'STORAGE_CORRUPT', /snapshot 5 data does not match its checksum/);
  });
});

describe('torn writes', () => {
  it('a write cut short at the end of the last segment is dropped (it was never acknowledged) and zeroed', async () => {
    const dir = await populated();
    // The start of a frame claiming 2000 bytes, of which only the first sector's worth landed.
    const torn = frameEntry({ index: 13, term: 1, type: 'normal', data: new Uint8Array(2000).fill(7) }).subarray(0, 300);
    await appendToLastSegment(dir, Buffer.from(torn));
    let s = await DurableRaftStorage.open(dir);
    expect([s.firstIndex(), s.lastIndex(), s.initialState().hardState.commit]).toEqual([4, 12, 10]);
    await s.save({ entries: run(13, 14, 2), mustSync: true });
    await s.close();
    s = await DurableRaftStorage.open(dir);
    expect([s.lastIndex(), s.term(14)]).toEqual([14, 2]);
    await s.close();
  });

  it('a frame header cut off by the end of the last segment is dropped', async () => {
    const dir = await populated();
    const file = path.join(dir, (await segmentsOf(dir)).at(-1) as string);
    const { end } = await framesOf(file);
    await fs.truncate(file, end + 5);
    await patch(file, end, Buffer.from([9, 9, 9, 9, 9]));
    const s = await DurableRaftStorage.open(dir);
    expect(s.lastIndex()).toBe(12);
    await s.close();
  });
});

describe('ownership and interrupted creation', () => {
  it('a directory another handle has open is refused with STORAGE_LOCKED, and opens once released', async () => {
    const dir = await populated();
    const first = await DurableRaftStorage.open(dir);
    try {
      await expectRefused(dir, 'STORAGE_LOCKED', /in use by another process or handle/);
    } finally {
      await first.close();
    }
    const s = await DurableRaftStorage.open(dir);
    expect(s.lastIndex()).toBe(12);
    await s.close();
  });

  it('a directory a live process holds is refused, naming it', async () => {
    const dir = await populated();
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      await fs.writeFile(path.join(dir, LOCK_FILE), `${holder.pid} -\n`);
      await expectRefused(dir, 'STORAGE_LOCKED', new RegExp(`held by pid ${holder.pid}`));
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a lock left by a process that died (SIGKILL, power cut) is taken over', async () => {
    const dir = await populated();
    await fs.writeFile(path.join(dir, LOCK_FILE), `${await deadPid()} 12345\n`);
    const s = await DurableRaftStorage.open(dir);
    expect(s.lastIndex()).toBe(12);
    await s.close();
    expect(await fs.readdir(dir)).not.toContain(LOCK_FILE);
  });

  it('creation cut short before the marker: the directory is created afresh', async () => {
    const dir = await dirs.make();
    await fs.writeFile(path.join(dir, segmentFileName(1)), Buffer.alloc(100));
    await fs.writeFile(path.join(dir, `${segmentFileName(1)}.tmp`), 'half');
    const s = await DurableRaftStorage.open(dir);
    expect([s.firstIndex(), s.lastIndex()]).toEqual([1, 0]);
    await s.close();
    expect((await fs.readdir(dir)).sort()).toEqual([segmentFileName(1), MARKER_FILE]);
  });
});
