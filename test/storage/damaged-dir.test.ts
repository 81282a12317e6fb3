// A data directory that is not ours, is from another version, or is damaged must be refused with a clear
// StorageError — never a crash, never a silent reset. Each refusal is checked twice: opening again gives
// the same answer, so the first attempt neither repaired nor wiped anything.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClassicLevel } from 'classic-level';
import { DurableRaftStorage } from '../../src/storage/raft-storage.js';
import { StorageError } from '../../src/storage/errors.js';
import type { StorageErrorCode } from '../../src/storage/errors.js';
import { MARKER_FILE } from '../../src/storage/data-dir.js';
import { FORMAT_KEY, HARD_STATE_KEY, logKey, snapChunkKey } from '../../src/storage/keys.js';
import { formatCodec, hardStateCodec, sealBytes } from '../../src/storage/records.js';
import { SeededRng } from '../../src/raft/rng.js';
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

/** A store with a log, a hard state and a snapshot with data in two chunks. */
async function populated(opts: { flushToTables?: boolean } = {}): Promise<string> {
  const dir = await dirs.make();
  const s = await DurableRaftStorage.open(dir, { snapshotChunkSize: 4 });
  await s.save({ entries: run(1, 12, 1), hardState: { term: 1, vote: 1, commit: 10 }, mustSync: true });
  await s.createSnapshot(5, { voters: [1, 2, 3], learners: [] }, new Uint8Array([1, 2, 3, 4, 5, 6]));
  await s.compact(3);
  await s.close();
  // LevelDB writes its log to tables when it recovers on open: one more open/close moves everything there.
  if (opts.flushToTables) await (await DurableRaftStorage.open(dir)).close();
  return dir;
}

async function withRaw(dir: string, fn: (db: ClassicLevel<Uint8Array, Uint8Array>) => Promise<void>): Promise<void> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
  await db.open();
  try {
    await fn(db);
  } finally {
    await db.close();
  }
}

async function garble(dir: string, match: (name: string) => boolean): Promise<string[]> {
  const rng = new SeededRng(42);
  const hit = (await fs.readdir(dir)).filter(match);
  for (const name of hit) {
    const file = path.join(dir, name);
    const size = Math.max((await fs.stat(file)).size, 64);
    await fs.writeFile(file, Uint8Array.from({ length: size }, () => rng.int(256)));
  }
  return hit;
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
    await expectRefused(dir, 'STORAGE_FOREIGN_DIR', /LevelDB database without a Setpoint format record/);
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
  it('a marker file from another version is refused before LevelDB is touched', async () => {
    const dir = await populated();
    await fs.writeFile(path.join(dir, MARKER_FILE), 'setpoint-raft 7\n');
    await expectRefused(dir, 'STORAGE_VERSION', /format version 7; this Setpoint reads version 1/);
  });

  it('a format record from another version is refused', async () => {
    const dir = await populated();
    await withRaw(dir, (db) => db.put(FORMAT_KEY, formatCodec.seal(FORMAT_KEY, { magic: 'setpoint-raft', version: 2 })));
    await expectRefused(dir, 'STORAGE_VERSION', /format version 2/);
  });
});

describe('damaged directories', () => {
  it('a damaged marker file', async () => {
    const dir = await populated();
    await fs.writeFile(path.join(dir, MARKER_FILE), 'garbage');
    await expectRefused(dir, 'STORAGE_CORRUPT', /SETPOINT_RAFT is damaged/);
  });

  it('the LevelDB files gone, the marker left', async () => {
    const dir = await populated();
    for (const name of await fs.readdir(dir)) if (name !== MARKER_FILE) await fs.rm(path.join(dir, name));
    await expectRefused(dir, 'STORAGE_CORRUPT', /LevelDB database is missing/);
  });

  it('garbage in CURRENT', async () => {
    const dir = await populated();
    expect(await garble(dir, (n) => n === 'CURRENT')).toHaveLength(1);
    await expectRefused(dir, 'STORAGE_CORRUPT', /CURRENT file is damaged/);
  });

  it('CURRENT naming a manifest that is gone', async () => {
    const dir = await populated();
    await fs.writeFile(path.join(dir, 'CURRENT'), 'MANIFEST-999999\n');
    await expectRefused(dir, 'STORAGE_CORRUPT', /names MANIFEST-999999, which is missing/);
  });

  it('garbage in the MANIFEST', async () => {
    const dir = await populated();
    expect(await garble(dir, (n) => n.startsWith('MANIFEST-'))).not.toHaveLength(0);
    await expectRefused(dir, 'STORAGE_CORRUPT', /corrupt/i);
  });

  it('garbage in the LevelDB log, where all records still are: LevelDB drops them, the marker notices', async () => {
    const dir = await populated();
    expect(await garble(dir, (n) => n.endsWith('.log') && n !== 'LOG')).not.toHaveLength(0);
    await expectRefused(dir, 'STORAGE_CORRUPT', /format record is missing/);
  });

  it('garbage in the LevelDB tables', async () => {
    const dir = await populated({ flushToTables: true });
    expect(await garble(dir, (n) => n.endsWith('.ldb'))).not.toHaveLength(0);
    await expectRefused(dir, 'STORAGE_CORRUPT', /corrupt/i);
  });
});

describe('records that disagree with their checksums or with each other', () => {
  it('an entry whose bytes changed under its checksum', async () => {
    const dir = await populated();
    await withRaw(dir, async (db) => {
      const v = Buffer.from((await db.get(logKey(7))) as Uint8Array);
      v[v.length - 1] = (v[v.length - 1] as number) ^ 0x01;
      await db.put(logKey(7), v);
    });
    await expectRefused(dir, 'STORAGE_CORRUPT', /log entry 7: checksum mismatch/);
  });

  it('an entry moved under another index', async () => {
    const dir = await populated();
    await withRaw(dir, async (db) => db.put(logKey(8), (await db.get(logKey(9))) as Uint8Array));
    await expectRefused(dir, 'STORAGE_CORRUPT', /log entry 8: checksum mismatch/);
  });

  it('a gap in the log', async () => {
    const dir = await populated();
    await withRaw(dir, (db) => db.del(logKey(7)));
    await expectRefused(dir, 'STORAGE_CORRUPT', /gap in the log: entry 8 follows entry 6/);
  });

  it('an entry left below the log start', async () => {
    const dir = await populated();
    await withRaw(dir, async (db) => db.put(logKey(2), (await db.get(logKey(4))) as Uint8Array));
    await expectRefused(dir, 'STORAGE_CORRUPT', /entry 2 is at or below the log start 3/);
  });

  it('a hard state committing beyond the last index', async () => {
    const dir = await populated();
    await withRaw(dir, (db) => db.put(HARD_STATE_KEY, hardStateCodec.seal(HARD_STATE_KEY, { term: 1, vote: 1, commit: 40 })));
    await expectRefused(dir, 'STORAGE_CORRUPT', /hard state commit 40 is beyond the last log index 12/);
  });

  it('a hard state that does not decode, checksum and all', async () => {
    const dir = await populated();
    await withRaw(dir, (db) => db.put(HARD_STATE_KEY, sealBytes(HARD_STATE_KEY, new Uint8Array([0xc1, 0xc1]))));
    await expectRefused(dir, 'STORAGE_CORRUPT', /metadata record 'hardstate'/);
  });

  it('a missing snapshot chunk', async () => {
    const dir = await populated();
    await withRaw(dir, (db) => db.del(snapChunkKey(1)));
    await expectRefused(dir, 'STORAGE_CORRUPT', /snapshot 5 has 2 data chunks but chunk 1 is missing/);
  });
});

describe('ownership and interrupted creation', () => {
  it('a directory another handle has open is refused with STORAGE_LOCKED, and opens once released', async () => {
    const dir = await populated();
    const first = await DurableRaftStorage.open(dir);
    try {
      await expectRefused(dir, 'STORAGE_LOCKED', /in use by another process/);
    } finally {
      await first.close();
    }
    const s = await DurableRaftStorage.open(dir);
    expect(s.lastIndex()).toBe(12);
    await s.close();
  });

  it('creation cut short before any record: an empty LevelDB without a marker becomes ours', async () => {
    const dir = await dirs.make();
    await new ClassicLevel(dir).close();
    const s = await DurableRaftStorage.open(dir);
    await s.close();
    expect(await fs.readdir(dir)).toContain(MARKER_FILE);
  });

  it('creation cut short after the format record: the marker is written and the data kept', async () => {
    const dir = await populated();
    await fs.rm(path.join(dir, MARKER_FILE));
    const s = await DurableRaftStorage.open(dir);
    expect([s.firstIndex(), s.lastIndex()]).toEqual([4, 12]);
    await s.close();
    expect(await fs.readdir(dir)).toContain(MARKER_FILE);
  });
});
