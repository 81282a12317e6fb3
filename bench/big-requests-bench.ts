// bench:big — issue 25 §2's big requests on three real members, Setpoint then etcd 3.4 on the same
// machine in the same run (bench/big-requests-scenario.ts runs them): one row per operation with the
// keys, Setpoint's longest member loop hold, each side's request latency and each side's term changes.
// BIG_KEYS=n sets the key count (default 500,000); `--side=setpoint` or `--side=etcd` runs one side.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, tmpdir } from 'node:os';
import type { StoreProgram } from '../src/harness/kinds/store-member.js';
import { BigScenario, runBigScenario } from './big-requests-scenario.js';
import type { OpResult } from './big-requests-scenario.js';
import { markdownTable } from './markdown-table.js';

const KEYS = Number(process.env.BIG_KEYS ?? 500_000);
const SIDES = (process.argv.find((a) => a.startsWith('--side='))?.slice(7) ?? 'setpoint,etcd').split(',');
const KEEP = process.env.BENCH_KEEP === '1';

async function side(program: StoreProgram): Promise<OpResult[]> {
  const log = (m: string): void => void process.stderr.write(`[${program}] ${m}\n`);
  const s = await BigScenario.start(program, KEYS, { baseDir: tmpdir(), log });
  try {
    return await runBigScenario(s);
  } finally {
    await s.close(KEEP);
    if (KEEP) log(`kept the cluster's data and logs in ${s.cluster.dir}`);
  }
}

async function main(): Promise<void> {
  const etcdVersion = execFileSync('etcd', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? 'etcd';
  const cpu = cpus();
  console.log(`bench:big — ${new Date().toISOString()}; ${KEYS} keys`);
  console.log(`machine: ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores; node ${process.version}; ${etcdVersion}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log('3-member clusters of real processes, heartbeat 100 ms, election 1000 ms, --snapshot-count 1000; each side on its own fresh cluster.');
  const ours = SIDES.includes('setpoint') ? await side('setpoint') : [];
  const etcd = SIDES.includes('etcd') ? await side('etcd') : [];
  const ops = (ours.length > 0 ? ours : etcd).map((r) => r.op);
  const rows: string[][] = [['operation', 'keys', 'Setpoint: longest loop hold (ms)', 'Setpoint (ms)', 'etcd 3.4 (ms)', 'term changes (Setpoint / etcd)', 'checks (Setpoint / etcd)']];
  const ms = (r: OpResult | undefined): string => (r ? r.ms.toFixed(0) : '—');
  const checks = (r: OpResult | undefined): string => (r ? (r.problems.length === 0 ? 'ok' : 'FAILED') : '—');
  for (const op of ops) {
    const s = ours.find((r) => r.op === op);
    const e = etcd.find((r) => r.op === op);
    rows.push([op, String(KEYS), s?.heldMs !== undefined ? `${s.heldMs.toFixed(1)} (${s.heldBy})` : '—', ms(s), ms(e), `${s?.termChanges ?? '—'} / ${e?.termChanges ?? '—'}`, `${checks(s)} / ${checks(e)}`]);
  }
  console.log(markdownTable(rows));
  for (const r of [...ours, ...etcd]) if (r.problems.length > 0) console.log(`- ${r.op}: ${r.problems.join('; ')}`);
}

await main();
