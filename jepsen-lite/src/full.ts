#!/usr/bin/env node
// `npm run jepsen:full -- --target setpoint|etcd [--time 60]`: every workload × nemesis, one run each,
// then one table. Exit code: 1 if any run is invalid, 2 if any is unknown (and none invalid), else 0.
import { Command, InvalidArgumentError } from 'commander';
import path from 'node:path';
import { killAllNow } from '../../src/harness/children.js';
import { repoRoot } from './repo-root.js';
import { runTest } from './runner.js';
import { parseNemeses } from './schedule.js';
import { WORKLOADS } from './workloads/make-workload.js';

function int(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

const program = new Command('jepsen-lite-full')
  .option('--target <t>', 'setpoint | etcd', 'setpoint')
  .option('--nodes <n>', 'cluster size', int, 3)
  .option('--time <s>', 'seconds per run', int, 60)
  .option('--rate <n>', 'operations per second', int, 200)
  .option('--seed <n>', 'seed for every run', int, 1)
  .option('--workloads <list>', 'comma-separated', WORKLOADS.join(','))
  .option('--nemeses <list>', 'comma-separated', 'one,leader,majority,bridge,majorities-ring,delay,loss,kill,pause,member')
  .option('--results <dir>', 'where run directories go', path.join(repoRoot(), 'jepsen-lite', 'results'));
program.parse();
const o = program.opts<{ target: string; nodes: number; time: number; rate: number; seed: number; workloads: string; nemeses: string; results: string }>();
if (o.target !== 'etcd' && o.target !== 'setpoint') program.error('--target must be setpoint or etcd');
const workloads = o.workloads.split(',').filter(Boolean);
const nemeses = parseNemeses(o.nemeses);

process.on('SIGINT', () => {
  killAllNow();
  process.exit(2);
});

const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const cells = new Map<string, string>();
let worst = 0;
for (const w of workloads) {
  for (const n of nemeses) {
    const label = `${w} × ${n}`;
    process.stdout.write(`${label.padEnd(32)} `);
    try {
      const { summary, dir } = await runTest({
        target: o.target as 'etcd' | 'setpoint',
        nodes: o.nodes,
        workload: w,
        nemeses: [n],
        timeS: o.time,
        rate: o.rate,
        seed: o.seed,
        resultsDir: path.join(o.results, `full-${stamp}-${o.target}`),
        runName: `${w}-${n}`,
      });
      const during = summary.phases.find((p) => p.phase === 'during');
      const v = summary.valid === true ? 'ok' : summary.valid === false ? 'INVALID' : 'unknown';
      worst = Math.max(worst, summary.valid === true ? 0 : summary.valid === false ? 3 : 2);
      cells.set(`${w}/${n}`, `${v} ${during ? `${during.okPerSec.toFixed(0)}/s ${(during.errorRate * 100).toFixed(0)}%` : ''}`);
      console.log(`${v}  during faults: ${during?.okPerSec.toFixed(1)} ok/s, ${((during?.errorRate ?? 0) * 100).toFixed(1)}% errors  ${dir}`);
    } catch (e) {
      worst = Math.max(worst, 2);
      cells.set(`${w}/${n}`, 'error');
      console.log(`error: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

const header = ['workload', ...nemeses];
const rows = workloads.map((w) => [w, ...nemeses.map((n) => cells.get(`${w}/${n}`) ?? '')]);
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
console.log(`\n${o.target}, ${o.nodes} nodes, ${o.time}s per run at ${o.rate}/s, seed ${o.seed} — cell: verdict, ok/s and error rate while faults were active`);
for (const r of [header, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  '));
process.exit(worst === 3 ? 1 : worst === 2 ? 2 : 0);
