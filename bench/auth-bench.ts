// bench:auth — etcdctl's `check perf --load=l` with auth enabled (root user and role, simple tokens,
// etcdctl --user root:…), Setpoint's 3 members against etcd 3.4's 3 members, in one run and one table.
// The clusters and check perf are bench:etcd's (bench/etcd-bench.ts): fresh 3-member clusters of real
// processes with the same flags, etcd first, then Setpoint, so neither competes with the other for the
// CPU. `--baseline` adds the same run without auth on each side, for what auth costs.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { etcdctl } from '../src/harness/etcdctl.js';
import type { StoreProgram as Flavor } from '../src/harness/kinds/store-member.js';
import type { StoreCluster } from '../src/harness/store-cluster.js';
import { checkPerf, log, withCluster } from './etcd-bench.js';
import type { Perf } from './etcd-bench.js';
import { markdownTable } from './markdown-table.js';

const BASELINE = process.argv.includes('--baseline');
const ROOT_PASSWORD = 'bench-root-pw';

const loadNow = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/** etcd's way to turn auth on: a root user holding the root role, then auth enable. */
async function enableAuth(c: StoreCluster): Promise<void> {
  for (const args of [['user', 'add', `root:${ROOT_PASSWORD}`], ['role', 'add', 'root'], ['user', 'grant-role', 'root', 'root'], ['auth', 'enable']]) {
    const r = await etcdctl(c.endpoints(), args);
    if (r.code !== 0) throw new Error(`etcdctl ${args.join(' ')} on ${c.program}: ${r.stderr}`);
  }
}

interface Run {
  readonly perf: Perf;
  readonly loadBefore: string;
  readonly loadAfter: string;
}

async function run(flavor: Flavor, auth: boolean): Promise<Run> {
  return withCluster(flavor, async (c) => {
    if (auth) await enableAuth(c);
    const loadBefore = loadNow();
    log(flavor, `check perf --load=l${auth ? ' with auth (--user root)' : ''} (60 s)`);
    const perf = await checkPerf(c.endpoints(), 'l', auth ? [`--user=root:${ROOT_PASSWORD}`] : []);
    return { perf, loadBefore, loadAfter: loadNow() };
  });
}

function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '—';
}

function ratio(ours: number, theirs: number): string {
  return Number.isFinite(ours) && Number.isFinite(theirs) && theirs !== 0 ? `${(ours / theirs).toFixed(2)}×` : '—';
}

function rows(label: string, e: Run, s: Run): string[][] {
  const verdict = (p: Perf): string => (p.pass ? 'PASS' : p.exitError !== undefined ? `no verdict (${p.exitError})` : 'FAIL');
  return [
    [`${label}: throughput (writes/s)`, fmt(e.perf.throughput), fmt(s.perf.throughput), ratio(s.perf.throughput, e.perf.throughput)],
    [`${label}: slowest request (s)`, fmt(e.perf.slowest, 3), fmt(s.perf.slowest, 3), ratio(s.perf.slowest, e.perf.slowest)],
    [`${label}: stddev (s)`, fmt(e.perf.stddev, 4), fmt(s.perf.stddev, 4), ratio(s.perf.stddev, e.perf.stddev)],
    [`${label}: failed requests`, fmt(e.perf.errors), fmt(s.perf.errors), '—'],
    [`${label}: result`, verdict(e.perf), verdict(s.perf), '—'],
    [`${label}: load average before → after`, `${e.loadBefore} → ${e.loadAfter}`, `${s.loadBefore} → ${s.loadAfter}`, '—'],
  ];
}

async function main(): Promise<void> {
  const etcdVersion = execFileSync('etcd', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? 'etcd';
  const cpu = cpus();
  console.log(`bench:auth — ${new Date().toISOString()}`);
  console.log(`machine: ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores; node ${process.version}; ${etcdVersion}`);
  console.log('3-member clusters on loopback, same flags, fresh for each run; etcd then Setpoint. Auth: root user with the root role, simple tokens, etcdctl --user root:….');
  console.log(`load average at start: ${loadNow()}`);
  const table: string[][] = [['', 'etcd 3.4', 'Setpoint', 'Setpoint/etcd']];
  if (BASELINE) table.push(...rows('check perf l, no auth', await run('etcd', false), await run('setpoint', false)));
  const e = await run('etcd', true);
  const s = await run('setpoint', true);
  table.push(...rows('check perf l, auth on', e, s));
  console.log(markdownTable(table));
  for (const [side, p] of [['etcd', e.perf], ['Setpoint', s.perf]] as const) {
    if (p.errorKinds.length > 0) console.log(`failed requests on ${side}: ${p.errorKinds.join('; ')}`);
  }
  console.log(`load average at end: ${loadNow()}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
