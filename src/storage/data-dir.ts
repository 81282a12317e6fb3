// What a raft data directory holds, who may use it, and how one is created. A marker file, written last
// at creation, tells a Setpoint directory from anything else: without it, a directory holding only the
// remains of a creation cut short is started afresh, and anything else is refused untouched. A lock file
// naming the owning process keeps two members (or two handles in one process) off the same log.
import { constants, promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { StorageError, errCorrupt, errForeignDir, errVersion, ioError } from './errors.js';
import { FORMAT_MAGIC, FORMAT_VERSION, segmentSeqOf } from './records.js';
import { syncDir } from './wal.js';

export const MARKER_FILE = 'SETPOINT_RAFT';
export const LOCK_FILE = 'LOCK';

export type DataDirState =
  /** Missing, empty, or holding only the remains of a creation cut short: create. */
  | { readonly kind: 'new'; readonly leftovers: readonly string[] }
  /** Marked as ours, in the version this code reads; `segments` are the log's sequence numbers, ascending. */
  | { readonly kind: 'marked'; readonly segments: readonly number[]; readonly names: readonly string[] };

function errnoOf(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

/** Files creation makes before the marker: a directory with nothing else was never used. */
function isCreationLeftover(name: string): boolean {
  return name === LOCK_FILE || name.endsWith('.tmp') || segmentSeqOf(name) !== undefined;
}

export async function inspectDataDir(dir: string): Promise<DataDirState> {
  let names: string[];
  try {
    const st = await fs.stat(dir);
    if (!st.isDirectory()) throw errForeignDir(dir, 'it is a file, not a directory');
    names = await fs.readdir(dir);
  } catch (e) {
    if (e instanceof StorageError) throw e;
    if (errnoOf(e) === 'ENOENT') return { kind: 'new', leftovers: [] };
    throw ioError(dir, 'reading the data directory', e);
  }
  if (names.includes(MARKER_FILE)) {
    const version = await readMarkerFile(dir);
    if (version !== FORMAT_VERSION) throw errVersion(dir, version, FORMAT_VERSION);
    const segments = names.map(segmentSeqOf).filter((s): s is number => s !== undefined);
    return { kind: 'marked', segments: segments.sort((a, b) => a - b), names };
  }
  if (names.every(isCreationLeftover)) return { kind: 'new', leftovers: names };
  const sample = names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
  throw errForeignDir(dir, `it is not empty (${sample}) and has no ${MARKER_FILE} marker`);
}

function markerText(version: number): string {
  return `${FORMAT_MAGIC} ${version}\nThis directory holds a Setpoint member's Raft log (write-ahead log segments and snapshots). Do not edit or delete files in it.\n`;
}

async function readMarkerFile(dir: string): Promise<number> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, MARKER_FILE), 'utf8');
  } catch (e) {
    throw ioError(dir, `reading ${MARKER_FILE}`, e);
  }
  const m = /^(\S+) (\d+)\n/.exec(text);
  if (!m || m[1] !== FORMAT_MAGIC) throw errCorrupt(dir, `${MARKER_FILE} is damaged (it does not start with '${FORMAT_MAGIC} <version>')`);
  return Number(m[2]);
}

/** Writes `content` to `name` atomically and durably: written under a temporary name, synced, renamed. */
export async function writeFileDurably(dir: string, name: string, content: Uint8Array | string): Promise<void> {
  const file = path.join(dir, name);
  const tmp = `${file}.tmp`;
  const fh = await fs.open(tmp, constants.O_CREAT | constants.O_TRUNC | constants.O_WRONLY, 0o644);
  try {
    await fh.writeFile(content);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.rename(tmp, file);
  await syncDir(dir);
}

/** Writes the marker: a torn marker would make the directory look damaged. */
export async function writeMarkerFile(dir: string): Promise<void> {
  try {
    await writeFileDurably(dir, MARKER_FILE, markerText(FORMAT_VERSION));
  } catch (e) {
    throw ioError(dir, `writing ${MARKER_FILE}`, e);
  }
}

// --- the lock ---

/** Directories this process holds, by real path: a second handle in the same process is refused too. */
const heldHere = new Set<string>();

/** The process's start time (Linux /proc), so a lock left by a dead process is not taken for one whose pid was reused. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined; // exited, not yet reaped
    return fields[19];
  } catch {
    return undefined;
  }
}

function lockText(): string {
  return `${process.pid} ${startTimeOf(process.pid) ?? '-'}\n`;
}

/** Whether the process a lock file names is still the one that wrote it. */
function holderAlive(text: string): boolean {
  const [pidText, started] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return false; // this process, but not a handle it holds (checked before)
  const now = startTimeOf(pid);
  if (now !== undefined) return started === '-' || now === started;
  if (hasProc) return false; // no such process (or a zombie)
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoOf(e) === 'EPERM';
  }
}

const hasProc = startTimeOf(process.pid) !== undefined;

/**
 * Takes the directory's lock, or refuses with STORAGE_LOCKED naming the holder. A lock left by a process
 * that has exited (SIGKILL, a power cut) is taken over. Returns the release function.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const real = await fs.realpath(dir);
  if (heldHere.has(real)) throw new StorageError('STORAGE_LOCKED', `${dir} is in use by another process or handle (this process has it open already)`);
  const file = path.join(dir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await fs.open(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o644);
      try {
        await fh.writeFile(lockText());
      } finally {
        await fh.close();
      }
      break;
    } catch (e) {
      if (errnoOf(e) !== 'EEXIST' || attempt > 0) throw e instanceof StorageError ? e : ioError(dir, `taking ${LOCK_FILE}`, e);
      const text = await fs.readFile(file, 'latin1').catch(() => '');
      if (holderAlive(text)) {
        throw new StorageError('STORAGE_LOCKED', `${dir} is in use by another process or handle (${LOCK_FILE} is held by pid ${text.trim().split(' ')[0]})`);
      }
      await fs.rm(file, { force: true });
    }
  }
  heldHere.add(real);
  return async () => {
    heldHere.delete(real);
    await fs.rm(file, { force: true });
  };
}
