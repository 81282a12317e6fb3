// Crash safety with real processes. A child appends and acknowledges in a loop (fixtures/crash-child.ts);
// the parent SIGKILLs it at seeded-random moments, reopens the directory itself, and checks that the store
// opens cleanly and every acknowledged write is there, in order, with the right content. Then it starts
// the next child on the same directory. What is checked does not depend on when the kill lands: only
// writes the parent saw acknowledged are required, and everything found must be well-formed whatever it is.
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManagedProcess } from '../../src/harness/managed-process.js';
import { seedFrom } from '../../src/harness/seed.js';
import { SeededRng } from '../../src/raft/rng.js';
import { DurableRaftStorage } from '../../src/storage/raft-storage.js';
import { StorageError } from '../../src/storage/errors.js';
import { TempDirs } from './helpers/temp-dirs.js';
import { entryPayload, snapshotPayload } from './fixtures/crash-payload.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(here, 'fixtures', 'crash-child.ts');
const ROOT = path.resolve(here, '..', '..');
const CYCLES = Number(process.env.STORAGE_CRASH_CYCLES ?? 20);
/** Every kill's moment and every child's seed come from this one (STORAGE_CRASH_SEED repeats a run). */
const SEED = seedFrom('STORAGE_CRASH_SEED');

/** One child's life, started by the harness: its output lines as they arrive, and conditions to wait on. */
class ChildLife {
  readonly lines: string[] = [];
  private readonly proc: ManagedProcess;

  constructor(dir: string, seed: number, ackedLast: number) {
    this.proc = new ManagedProcess(
      'crash-child',
      { bin: process.execPath, args: ['--import', 'tsx', CHILD, dir, String(seed), String(ackedLast)], cwd: ROOT },
      {
        capture: true,
        onLine: (line, stream) => {
          if (stream === 'stdout') this.lines.push(line);
        },
      },
    );
    this.proc.start();
  }

  /** Resolves once a line satisfies `pred`; fails if the child dies first or nothing comes in `ms`. */
  async waitForLine(pred: (line: string) => boolean, what: string, ms = 60_000): Promise<void> {
    await this.proc.waitReady(what, () => this.lines.some(pred), ms);
  }

  /** SIGKILL, then the exit, once every line it printed has been read. */
  async kill(): Promise<void> {
    await this.proc.kill('SIGKILL');
  }
}

/** What the parent has seen acknowledged, over every life so far. */
interface Acked {
  last: number;
  /** Term of each acknowledged index. */
  readonly terms: Map<number, number>;
  snapshot: number;
  compacted: number;
}

function absorb(acked: Acked, lines: readonly string[], life: number): void {
  let prevTo: number | undefined;
  for (const line of lines) {
    const [kind, a, b, c] = line.split(' ');
    if (kind === 'A') {
      const [from, to, term] = [Number(a), Number(b), Number(c)];
      // Acknowledgements come in log order: each batch starts right after the previous one.
      if (prevTo !== undefined) expect(from, `life ${life}: ack ${line} after ..${prevTo}`).toBe(prevTo + 1);
      prevTo = to;
      for (let i = from; i <= to; i++) acked.terms.set(i, term);
      // A new life may overwrite an unacknowledged tail; acknowledged indexes never go backwards.
      expect(to, `life ${life}: ack ${line} behind acknowledged ${acked.last}`).toBeGreaterThan(acked.last);
      acked.last = to;
    } else if (kind === 'S') acked.snapshot = Math.max(acked.snapshot, Number(a));
    else if (kind === 'C') acked.compacted = Math.max(acked.compacted, Number(a));
  }
}

/** Reopens the directory and checks it against everything acknowledged. */
async function verify(dir: string, acked: Acked, where: string): Promise<void> {
  const s = await DurableRaftStorage.open(dir);
  try {
    const first = s.firstIndex();
    const last = s.lastIndex();
    const snap = s.snapshot();
    const hs = s.initialState().hardState;
    expect(last, `${where}: last index`).toBeGreaterThanOrEqual(acked.last);
    expect(snap.metadata.index, `${where}: snapshot index`).toBeGreaterThanOrEqual(acked.snapshot);
    // No snapshot yet (a child killed before its twelfth round) is the empty one at index 0.
    const wantSnap = snap.metadata.index === 0 ? '' : Buffer.from(snapshotPayload(snap.metadata.index)).toString();
    expect(Buffer.from(snap.data).toString(), `${where}: snapshot data`).toBe(wantSnap);
    expect(first - 1, `${where}: compaction point`).toBeGreaterThanOrEqual(acked.compacted);
    expect(first - 1, `${where}: compaction beyond the snapshot`).toBeLessThanOrEqual(snap.metadata.index);
    // Every acknowledged entry that compaction has not (legitimately) removed, with its term.
    for (let i = first; i <= acked.last; i++) {
      const want = acked.terms.get(i);
      if (want !== undefined) expect(s.term(i), `${where}: term of acknowledged entry ${i}`).toBe(want);
    }
    // Everything on disk, acknowledged or not, is well-formed: terms never decrease, content matches.
    let prevTerm = s.term(first - 1);
    for (const e of last >= first ? s.entries(first, last + 1, Infinity) : []) {
      expect(e.term, `${where}: term order at ${e.index}`).toBeGreaterThanOrEqual(prevTerm);
      expect(Buffer.from(e.data).equals(Buffer.from(entryPayload(e.index, e.term))), `${where}: content of entry ${e.index}`).toBe(true);
      prevTerm = e.term;
    }
    expect(hs.term, `${where}: hard state term vs last entry`).toBeGreaterThanOrEqual(prevTerm);
    expect(hs.commit, `${where}: commit`).toBeLessThanOrEqual(last);
  } finally {
    await s.close();
  }
}

const dirs = new TempDirs();
const lives = new Set<ChildLife>();

function startChild(dir: string, seed: number, ackedLast: number): ChildLife {
  const life = new ChildLife(dir, seed, ackedLast);
  lives.add(life);
  return life;
}

afterEach(async () => {
  for (const life of lives) await life.kill();
  lives.clear();
});
afterAll(() => dirs.removeAll());

describe('crash safety with SIGKILL', () => {
  it(`every acknowledged write survives ${CYCLES} kills at random moments`, { timeout: 600_000 }, async () => {
    console.log(`storage crash test: ${SEED.line}`);
    const rng = new SeededRng(SEED.value);
    const dir = await dirs.make('setpoint-crash-');
    const acked: Acked = { last: 0, terms: new Map(), snapshot: 0, compacted: 0 };
    let totalAcks = 0;
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const life = startChild(dir, rng.u32(), acked.last);
        const delay = 20 + rng.int(281);
        if (cycle % 4 === 3) {
          // Sometimes kill counting from the spawn: the kill may land while the child loads, opens or
          // recovers the database, or mid-write. Every outcome must still verify.
          await new Promise((resolve) => setTimeout(resolve, delay));
        } else {
          await life.waitForLine((l) => l.startsWith('A '), 'a first acknowledgement');
          if (cycle === 0) {
            // While it runs, the directory is its own.
            const e = await DurableRaftStorage.open(dir).then(async (s) => (await s.close(), undefined), (err: unknown) => err);
            expect(e instanceof StorageError && e.code).toBe('STORAGE_LOCKED');
          }
          await new Promise((resolve) => setTimeout(resolve, delay));
        }
        await life.kill();
        lives.delete(life);
        const before = acked.last;
        absorb(acked, life.lines, cycle);
        totalAcks += life.lines.filter((l) => l.startsWith('A ')).length;
        await verify(dir, acked, `cycle ${cycle} (${SEED.line}, killed after ${delay} ms, acked ${before}→${acked.last})`);
      }
      // The test proves little if the children barely wrote: make sure the kills interrupted real work.
      expect(acked.last).toBeGreaterThan(CYCLES * 10);
      expect(totalAcks).toBeGreaterThan(CYCLES);
      expect(acked.snapshot).toBeGreaterThan(0);
    } catch (e) {
      console.error(`storage crash test failed: ${SEED.line}`);
      throw e;
    }
  });
});
