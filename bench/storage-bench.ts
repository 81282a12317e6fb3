// bench:storage — entries per second DurableRaftStorage saves, as a member's Ready loop drives it: one
// save per Ready (entries + hard state), awaited before the next, with and without fsync. The last rows
// keep several saves in flight to show what group commit buys when Readies queue up behind an fsync.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Entry } from '../src/raft/types.js';
import { DurableRaftStorage } from '../src/storage/raft-storage.js';

interface Case {
  readonly batch: number;
  readonly sync: boolean;
  readonly inflight: number;
}

interface Result {
  readonly entries: number;
  readonly saves: number;
  readonly ms: number;
}

const ENTRY_BYTES = 100;
const MAX_ENTRIES = Number(process.env.BENCH_ENTRIES ?? 500_000);
const MAX_MS = Number(process.env.BENCH_MS ?? 3_000);

async function runCase(c: Case): Promise<Result> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'setpoint-bench-'));
  const s = await DurableRaftStorage.open(dir);
  const data = new Uint8Array(ENTRY_BYTES).fill(97);
  let next = 1;
  let saves = 0;
  const saveOne = (): Promise<void> => {
    const entries: Entry[] = [];
    for (let k = 0; k < c.batch; k++) entries.push({ index: next + k, term: 1, type: 'normal', data });
    next += c.batch;
    saves++;
    return s.save({ entries, hardState: { term: 1, vote: 1n, commit: next - 1 - c.batch }, mustSync: c.sync });
  };
  const t0 = process.hrtime.bigint();
  const elapsed = (): number => Number(process.hrtime.bigint() - t0) / 1e6;
  const inflight: Array<Promise<void>> = [];
  while (next - 1 < MAX_ENTRIES && elapsed() < MAX_MS) {
    inflight.push(saveOne());
    if (inflight.length >= c.inflight) await inflight.shift();
  }
  await Promise.all(inflight);
  const ms = elapsed();
  await s.close();
  await fs.rm(dir, { recursive: true, force: true });
  return { entries: next - 1, saves, ms };
}

const cases: Case[] = [];
for (const sync of [true, false]) for (const batch of [1, 64, 1024]) cases.push({ batch, sync, inflight: 1 });
cases.push({ batch: 1, sync: true, inflight: 16 }, { batch: 64, sync: true, inflight: 16 });

await runCase({ batch: 64, sync: false, inflight: 1 }); // warm-up
const header = ['batch', 'entry', 'sync', 'in flight', 'entries', 'ms', 'saves/s', 'entries/s', 'MB/s'];
const rows: string[][] = [];
for (const c of cases) {
  const r = await runCase(c);
  const perSec = (n: number): number => (n / r.ms) * 1000;
  rows.push([
    String(c.batch),
    `${ENTRY_BYTES} B`,
    c.sync ? 'fsync' : 'no',
    String(c.inflight),
    String(r.entries),
    r.ms.toFixed(0),
    Math.round(perSec(r.saves)).toLocaleString('en-US'),
    Math.round(perSec(r.entries)).toLocaleString('en-US'),
    ((perSec(r.entries) * ENTRY_BYTES) / 1e6).toFixed(1),
  ]);
}
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (cells: string[]): string => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
console.log(`bench:storage — DurableRaftStorage on ${os.tmpdir()}, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
