// bench:kv — the MVCC store on classic-level: puts/s applied in batches, ranges/s, memory per key and
// restart time with 1M keys of 100-byte values. Prints one table.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { KvStore } from '../src/kv/kv-store.js';

const KEYS = Number(process.env.BENCH_KEYS ?? 1_000_000);
const VALUE = Buffer.alloc(100, 0x61);
const FLUSH_EVERY = 10_000;

function key(i: number): Buffer {
  return Buffer.from(`/registry/pods/default/pod-${String(i).padStart(8, '0')}`);
}

function rssMB(): number {
  return process.memoryUsage().rss / 1024 / 1024;
}

/**
 * The resident set split as Linux counts it: anonymous memory (the heap, the index, LevelDB's caches) and
 * file pages mapped into the process (LevelDB reads its tables through mmap, so the pages of every table
 * the index rebuild scanned count as resident until the kernel reclaims them).
 */
function rssSplitMB(): { anonMB: number; fileMB: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { anonMB: kb('RssAnon') / 1024, fileMB: kb('RssFile') / 1024 };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'setpoint-bench-kv-'));
  const rows: [string, string, string][] = [];
  try {
    global.gc?.();
    const s = await KvStore.open(dir);
    // Applied as the server applies committed entries: one txn each, flushed in batches.
    let t0 = performance.now();
    for (let i = 0; i < KEYS; i++) {
      await s.put({ key: key(i), value: VALUE });
      if (i % FLUSH_EVERY === FLUSH_EVERY - 1) await s.flush();
    }
    await s.flush();
    let ms = performance.now() - t0;
    rows.push(['puts applied (1 put per txn, 100 B values)', `${Math.round((KEYS / ms) * 1000).toLocaleString('en-US')}/s`, '>= 100,000/s']);

    // Overwrites of existing keys (history grows, index gains revisions).
    const over = Math.min(KEYS, 200_000);
    t0 = performance.now();
    for (let i = 0; i < over; i++) {
      await s.put({ key: key(i), value: VALUE });
      if (i % FLUSH_EVERY === FLUSH_EVERY - 1) await s.flush();
    }
    await s.flush();
    ms = performance.now() - t0;
    rows.push(['puts applied (overwrites)', `${Math.round((over / ms) * 1000).toLocaleString('en-US')}/s`, '']);

    // Point reads at the head and 100-key prefix ranges.
    const reads = 200_000;
    t0 = performance.now();
    for (let i = 0; i < reads; i++) await s.range({ key: key((i * 7919) % KEYS) });
    ms = performance.now() - t0;
    rows.push(['point ranges at head', `${Math.round((reads / ms) * 1000).toLocaleString('en-US')}/s`, '']);
    const scans = 2_000;
    t0 = performance.now();
    for (let i = 0; i < scans; i++) {
      const start = (i * 7919) % (KEYS - 100);
      await s.range({ key: key(start), rangeEnd: key(start + 100) });
    }
    ms = performance.now() - t0;
    rows.push(['100-key ranges at head', `${Math.round((scans / ms) * 1000).toLocaleString('en-US')}/s`, '']);
    t0 = performance.now();
    for (let i = 0; i < 20_000; i++) await s.range({ key: key((i * 7919) % over), revision: 2 + ((i * 7919) % over) });
    ms = performance.now() - t0;
    rows.push(['point ranges at old revisions (disk)', `${Math.round((20_000 / ms) * 1000).toLocaleString('en-US')}/s`, '']);

    await s.compact(KEYS + 1).done;
    global.gc?.();
    const rss = rssMB();
    rows.push([`RSS of this process after the load (garbage included)`, `${rss.toFixed(0)} MB`, '']);
    await s.close();

    // A restart in a fresh process: how long the index takes to rebuild, and what a running store with
    // these keys really holds (this process's heap still carries the load phase's garbage).
    const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--open', dir], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`restart child failed: ${child.stderr}`);
    const r = JSON.parse(child.stdout) as { openMs: number; rssMB: number; baseMB: number; anonMB: number; fileMB: number };
    rows.push([`restart (rebuild index from ${KEYS.toLocaleString('en-US')} keys)`, `${(r.openMs / 1000).toFixed(2)} s`, '< 10 s']);
    rows.push([`RSS of a store holding ${KEYS.toLocaleString('en-US')} keys (fresh process)`, `${r.rssMB.toFixed(0)} MB (${(((r.rssMB - r.baseMB) * 1024 * 1024) / KEYS).toFixed(0)} B/key)`, '< 600 MB']);
    rows.push([`  of it anonymous memory / LevelDB's tables mapped from disk`, `${r.anonMB.toFixed(0)} / ${r.fileMB.toFixed(0)} MB`, '']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  console.log(`bench:kv — MVCC store on classic-level, node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
  console.log(`${'measure'.padEnd(w0)}  ${'result'.padStart(w1)}  target`);
  console.log(`${'-'.repeat(w0)}  ${'-'.repeat(w1)}  ------`);
  for (const [a, b, c] of rows) console.log(`${a.padEnd(w0)}  ${b.padStart(w1)}  ${c}`);
}

/** The restart half, run in a child: open the store, check it, report time and memory as JSON. */
async function openOnly(dir: string): Promise<void> {
  global.gc?.();
  const baseMB = rssMB();
  const t0 = performance.now();
  const s = await KvStore.open(dir);
  const openMs = performance.now() - t0;
  if ((await s.range({ key: key(KEYS - 1) })).count !== 1) throw new Error('last key missing after restart');
  global.gc?.();
  process.stdout.write(JSON.stringify({ openMs, rssMB: rssMB(), baseMB, ...rssSplitMB() }));
  await s.close();
}

const openAt = process.argv.indexOf('--open');
if (openAt >= 0) await openOnly(process.argv[openAt + 1] as string);
else await main();
