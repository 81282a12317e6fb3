// What a data directory holds before LevelDB touches it. A marker file written last at creation tells a
// Setpoint directory from anything else, and from a LevelDB that lost its records: without it, a LevelDB
// that recovered to empty (garbage in its log) would look like a fresh directory and be silently reset.
import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StorageError, errCorrupt, errForeignDir, errVersion } from './errors.js';
import { FORMAT_MAGIC, FORMAT_VERSION } from './records.js';

export const MARKER_FILE = 'SETPOINT_RAFT';
const LEVELDB_CURRENT = 'CURRENT';

export type DataDirState =
  /** Missing or empty: create. */
  | { readonly kind: 'new' }
  /** Marked as ours (the marker names a version this code reads). */
  | { readonly kind: 'marked'; readonly version: number }
  /** A LevelDB without our marker: ours if creation was cut short, else someone else's. The DB decides. */
  | { readonly kind: 'unmarked-leveldb' };

function ioError(dir: string, doing: string, e: unknown): StorageError {
  return new StorageError('STORAGE_IO', `${dir}: ${doing} failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
}

function errnoOf(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

export async function inspectDataDir(dir: string): Promise<DataDirState> {
  let names: string[];
  try {
    const st = await fs.stat(dir);
    if (!st.isDirectory()) throw errForeignDir(dir, 'it is a file, not a directory');
    names = await fs.readdir(dir);
  } catch (e) {
    if (e instanceof StorageError) throw e;
    if (errnoOf(e) === 'ENOENT') return { kind: 'new' };
    throw ioError(dir, 'reading the data directory', e);
  }
  if (names.length === 0) return { kind: 'new' };
  const hasCurrent = names.includes(LEVELDB_CURRENT);
  if (names.includes(MARKER_FILE)) {
    const version = await readMarkerFile(dir);
    if (version !== FORMAT_VERSION) throw errVersion(dir, version, FORMAT_VERSION);
    if (!hasCurrent) throw errCorrupt(dir, `the LevelDB database is missing (no ${LEVELDB_CURRENT} file beside ${MARKER_FILE})`);
    await checkCurrent(dir, names);
    return { kind: 'marked', version };
  }
  if (hasCurrent) return { kind: 'unmarked-leveldb' };
  const sample = names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
  throw errForeignDir(dir, `it is not empty (${sample}) and has no ${MARKER_FILE} marker`);
}

/**
 * LevelDB reports a damaged CURRENT (the pointer to its manifest) as a plain I/O error about some missing
 * file; in a directory known to be ours that is damage, so check it here and say so.
 */
async function checkCurrent(dir: string, names: readonly string[]): Promise<void> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, LEVELDB_CURRENT), 'latin1');
  } catch (e) {
    throw ioError(dir, `reading ${LEVELDB_CURRENT}`, e);
  }
  const m = /^(MANIFEST-\d+)\n$/.exec(text);
  if (!m) throw errCorrupt(dir, `LevelDB's ${LEVELDB_CURRENT} file is damaged (it does not name a MANIFEST)`);
  if (!names.includes(m[1] as string)) throw errCorrupt(dir, `LevelDB's ${LEVELDB_CURRENT} names ${m[1]}, which is missing`);
}

function markerText(version: number): string {
  return `${FORMAT_MAGIC} ${version}\nThis directory holds a Setpoint member's Raft log (LevelDB). Do not edit or delete files in it.\n`;
}

async function readMarkerFile(dir: string): Promise<number> {
  const file = path.join(dir, MARKER_FILE);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw ioError(dir, `reading ${MARKER_FILE}`, e);
  }
  const m = /^(\S+) (\d+)\n/.exec(text);
  if (!m || m[1] !== FORMAT_MAGIC) throw errCorrupt(dir, `${MARKER_FILE} is damaged (it does not start with '${FORMAT_MAGIC} <version>')`);
  return Number(m[2]);
}

/** Writes the marker atomically and durably: a torn marker would make the directory look damaged. */
export async function writeMarkerFile(dir: string): Promise<void> {
  const file = path.join(dir, MARKER_FILE);
  const tmp = `${file}.tmp`;
  try {
    const fh = await fs.open(tmp, constants.O_CREAT | constants.O_TRUNC | constants.O_WRONLY, 0o644);
    try {
      await fh.writeFile(markerText(FORMAT_VERSION));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, file);
    // The rename itself must survive a power cut, so sync the directory too.
    const dh = await fs.open(dir, constants.O_RDONLY);
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch (e) {
    throw ioError(dir, `writing ${MARKER_FILE}`, e);
  }
}
