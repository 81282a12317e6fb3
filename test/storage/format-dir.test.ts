// Whole raft data directories written by earlier code, one per format version (fixtures/format-v<N>-dir.json,
// made once by fixtures/write-format-dir.ts and never rewritten): the current code must load each one it
// reads to exactly the state recorded with it, and go on writing to it; a version it no longer reads must
// be refused with STORAGE_VERSION, not misread. The directories span several segments (the later ones
// start with a header restating the state), a snapshot with its data file, a compaction, a learner's
// configuration and a conflicting tail that a new leader replaced.
import { promises as fs, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/storage/errors.js';
import { DurableRaftStorage } from '../../src/storage/raft-storage.js';
import { FORMAT_VERSION } from '../../src/storage/records.js';
import { dirState, type FormatDirFixture } from './fixtures/format-dir.js';
import { TempDirs } from './helpers/temp-dirs.js';

const fixtureDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixtures = readdirSync(fixtureDir)
  .filter((n) => /^format-v\d+-dir\.json$/.test(n))
  .sort()
  .map((n) => JSON.parse(readFileSync(path.join(fixtureDir, n), 'utf8')) as FormatDirFixture);

const dirs = new TempDirs();
afterEach(() => dirs.removeAll());

/** The fixture's files, zero-filled back to their sizes, in a fresh directory. */
async function materialize(f: FormatDirFixture): Promise<string> {
  const dir = await dirs.make();
  for (const file of f.files) {
    const b = Buffer.alloc(file.size);
    Buffer.from(file.hex, 'hex').copy(b);
    await fs.writeFile(path.join(dir, file.name), b);
  }
  return dir;
}

describe('raft data directories of every format version', () => {
  it('has a sample directory of the version this code writes', () => {
    expect(fixtures.map((f) => f.version)).toContain(FORMAT_VERSION);
  });

  it.each(fixtures.map((f) => [f.version, f] as const))('format version %i', async (version, f) => {
    const dir = await materialize(f);
    if (version !== FORMAT_VERSION) {
      const e = await DurableRaftStorage.open(dir).then(
        async (s) => (await s.close(), undefined),
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(StorageError);
      expect((e as StorageError).code).toBe('STORAGE_VERSION');
      return;
    }
    const s = await DurableRaftStorage.open(dir);
    expect(dirState(s)).toEqual(f.state);
    // It goes on from where it was: one more entry, kept across a reopen.
    const next = f.state.lastIndex + 1;
    await s.save({ entries: [{ term: f.state.hardState.term, index: next, type: 'normal', data: new Uint8Array([1]) }], hardState: { ...f.state.hardState, vote: BigInt(f.state.hardState.vote) }, mustSync: true });
    await s.close();
    const again = await DurableRaftStorage.open(dir);
    expect(again.lastIndex()).toBe(next);
    expect(dirState(again).entries.slice(0, -1)).toEqual(f.state.entries);
    await again.close();
  });
});
