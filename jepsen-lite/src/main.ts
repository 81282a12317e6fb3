#!/usr/bin/env node
// `npm run jepsen -- --target setpoint|etcd --nodes 3|5 --workload W --nemesis N[,N…] --time 60 --rate 200 --seed S`
// Exit code: 0 valid, 1 invalid, 2 unknown (or the run could not complete).
import { Command, InvalidArgumentError } from 'commander';
import cliProgress from 'cli-progress';
import path from 'node:path';
import { killAllNow } from '../../src/harness/children.js';
import { repoRoot } from './repo-root.js';
import { formatSummary } from './print.js';
import { runTest, type Progress } from './runner.js';
import { parseNemeses } from './schedule.js';
import { WORKLOADS } from './workloads/make-workload.js';

function int(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

function keyValue(v: string, prev: Record<string, string>): Record<string, string> {
  const i = v.indexOf('=');
  if (i <= 0) throw new InvalidArgumentError('expected KEY=VALUE');
  return { ...prev, [v.slice(0, i)]: v.slice(i + 1) };
}

const program = new Command('jepsen-lite')
  .description('Break a Setpoint (or etcd) cluster on purpose and check every history.')
  .option('--target <t>', 'setpoint | etcd', 'setpoint')
  .option('--nodes <n>', 'cluster size (3 or 5)', int, 3)
  .option('--workload <w>', WORKLOADS.join(' | '), 'register')
  .option('--nemesis <list>', 'comma-separated: one,leader,majority,bridge,majorities-ring,partition,delay,loss,kill,pause,member,none', 'partition')
  .option('--time <s>', 'seconds of load', int, 60)
  .option('--rate <n>', 'offered operations per second (all clients together)', int, 200)
  .option('--seed <n>', 'seed for the fault schedule and the operation mix', int)
  .option('--concurrency <n>', 'client workers (default 2 per node)', int)
  .option('--timeout <ms>', 'per-request deadline', int, 2000)
  .option('--interval <ms>', 'mean fault length and gap', int, 5000)
  .option('--check-budget <ms>', 'time the checkers may search before answering unknown', int, 60_000)
  .option('--serializable-reads', 'read with serializable=true (member-local): a checker self-test that must find stale reads')
  .option('--env <K=V>', 'extra environment for every member (repeatable)', keyValue, {} as Record<string, string>)
  .option('--results <dir>', 'where run directories go', path.join(repoRoot(), 'jepsen-lite', 'results'))
  .option('--name <run>', 'run directory name')
  .option('--no-progress', 'no progress bar');

program.parse();
const o = program.opts<{
  target: string;
  nodes: number;
  workload: string;
  nemesis: string;
  time: number;
  rate: number;
  seed?: number;
  concurrency?: number;
  timeout: number;
  interval: number;
  checkBudget: number;
  serializableReads?: boolean;
  env: Record<string, string>;
  results: string;
  name?: string;
  progress: boolean;
}>();

if (o.target !== 'etcd' && o.target !== 'setpoint') program.error('--target must be setpoint or etcd');
if (!(WORKLOADS as readonly string[]).includes(o.workload)) program.error(`--workload must be one of ${WORKLOADS.join(', ')}`);
const nemeses = (() => {
  try {
    return parseNemeses(o.nemesis);
  } catch (e) {
    return program.error((e as Error).message);
  }
})();
// The seed only picks a default; every decision in the run comes from a SeededRng built from it.
const seed = o.seed ?? Date.now() % 1_000_000;

const abort = new AbortController();
const onSignal = (): void => {
  if (abort.signal.aborted) {
    killAllNow();
    process.exit(2);
  }
  console.error('\ninterrupted: stopping the cluster (Ctrl-C again to kill at once)');
  abort.abort();
  setTimeout(() => {
    killAllNow();
    process.exit(2);
  }, 15_000).unref();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const bar = o.progress
  ? new cliProgress.SingleBar(
      {
        format: ' {bar} {value}/{total}s | ok {ok} fail {fail} info {info} | {stage} | fault: {fault}',
        hideCursor: true,
        noTTYOutput: true,
        notTTYSchedule: 5000,
        clearOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    )
  : undefined;

console.log(`jepsen-lite: ${o.target}, ${o.nodes} nodes, workload ${o.workload}, nemesis ${nemeses.join(',')}, ${o.time}s at ${o.rate}/s, seed ${seed}`);
bar?.start(o.time, 0, { ok: 0, fail: 0, info: 0, stage: 'starting', fault: 'none' });
const onProgress = (p: Progress): void => {
  bar?.update(Math.floor(p.elapsedMs / 1000), { ok: p.ok, fail: p.fail, info: p.info, stage: p.stage, fault: p.fault.slice(0, 60) });
};

try {
  const { summary, dir } = await runTest({
    target: o.target as "etcd" | "setpoint",
    nodes: o.nodes,
    workload: o.workload,
    nemeses,
    timeS: o.time,
    rate: o.rate,
    seed,
    timeoutMs: o.timeout,
    intervalMs: o.interval,
    checkBudgetMs: o.checkBudget,
    serializableReads: o.serializableReads ?? false,
    env: o.env,
    resultsDir: o.results,
    signal: abort.signal,
    onProgress,
    ...(o.concurrency === undefined ? {} : { concurrency: o.concurrency }),
    ...(o.name === undefined ? {} : { runName: o.name }),
  });
  bar?.stop();
  console.log('\n' + formatSummary(summary, dir));
  process.exit(summary.valid === true ? 0 : summary.valid === false ? 1 : 2);
} catch (e) {
  bar?.stop();
  console.error(`jepsen-lite: run failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  killAllNow();
  process.exit(2);
}
