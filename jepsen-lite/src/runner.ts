// One jepsen-lite run: start the cluster, drive the workload's clients at the requested rate while the
// nemesis follows the seeded schedule, heal, let the cluster recover, take final reads, check every
// property, compare HashKV, write the report, and stop every process — also when anything throws.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SeededRng } from '../../src/raft/rng.js';
import { Cluster } from './cluster.js';
import { checkHashKV } from './checkers/hashkv.js';
import { combine, type CheckResult, type Verdict } from './checkers/result.js';
import { History } from './history.js';
import { NemesisRunner } from './nemesis.js';
import { Network } from './network.js';
import { writeReport } from './report/html.js';
import { makeSchedule, phasesFor, type NemesisName, type ScheduledFault } from './schedule.js';
import { phaseStats, type PhaseStats } from './stats.js';
import { targetByName } from './target.js';
import { WorkerHandle, type RunContext, type Workload } from './workload.js';
import { makeWorkload } from './workloads/make-workload.js';

export interface RunOptions {
  target: 'etcd' | 'setpoint';
  nodes: number;
  workload: string;
  nemeses: NemesisName[];
  timeS: number;
  rate: number;
  seed: number;
  concurrency?: number;
  timeoutMs?: number;
  /** Mean fault length and gap, ms (Jepsen's nemesis interval; 5 s). */
  intervalMs?: number;
  serializableReads?: boolean;
  env?: Record<string, string>;
  resultsDir: string;
  runName?: string;
  heartbeatMs?: number;
  electionMs?: number;
  snapshotCount?: number;
  checkBudgetMs?: number;
  keepData?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

export interface Progress {
  elapsedMs: number;
  totalMs: number;
  ok: number;
  fail: number;
  info: number;
  fault: string;
  stage: string;
}

export interface Summary {
  run: string;
  valid: Verdict;
  options: Omit<RunOptions, 'signal' | 'onProgress'>;
  schedule: ScheduledFault[];
  faults: History['faults'];
  phases: PhaseStats[];
  checks: CheckResult[];
  counts: { ok: number; fail: number; info: number };
  notes: History['notes'];
  durationMs: number;
  /** Wall-clock ms each stage took: cluster start, load, heal, final reads, checks. */
  stages: Record<string, number>;
  /** Peer bytes through the harness proxies. */
  peerBytes: { forwarded: number; dropped: number };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runTest(o: RunOptions): Promise<{ summary: Summary; dir: string }> {
  const run = o.runName ?? `${new Date().toISOString().replace(/[:.]/g, '-')}-${o.target}-${o.workload}-s${o.seed}`;
  const dir = path.join(o.resultsDir, run);
  mkdirSync(dir, { recursive: true });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'jepsen-lite-'));
  const rng = new SeededRng(o.seed);
  const schedRng = rng.fork();
  const netRng = rng.fork();
  const workerRng = rng.fork();
  const workload: Workload = makeWorkload(o.workload);
  const totalMs = o.timeS * 1000;
  const phases = phasesFor(totalMs, o.intervalMs);
  const spare = o.nemeses.includes('member') ? 1 : 0;
  const schedule = makeSchedule(o.nemeses, phases, o.nodes + spare, schedRng);
  const network = new Network();
  let history = new History();
  const cluster = new Cluster({
    target: targetByName(o.target),
    nodes: o.nodes,
    spare,
    dir: dataDir,
    logDir: path.join(dir, 'logs'),
    heartbeatMs: o.heartbeatMs ?? 100,
    electionMs: o.electionMs ?? 1000,
    snapshotCount: o.snapshotCount ?? 100,
    env: o.env ?? {},
    network,
    rng: netRng,
    onExit: (s, code, sig) => history.note(`${s.name} exited on its own (code ${code}, signal ${sig})`),
  });
  let stopAll = false;
  const aborted = (): boolean => o.signal?.aborted ?? false;
  const ctx: RunContext = {
    cluster,
    history,
    timeoutMs: o.timeoutMs ?? 2000,
    serializableReads: o.serializableReads ?? false,
    rng: workerRng,
    stopping: () => stopAll || aborted(),
    nodes: o.nodes,
    checkBudgetMs: o.checkBudgetMs ?? 60_000,
  };
  const progress = (stage: string, nemesis?: NemesisRunner): void => {
    if (!o.onProgress) return;
    const c = { ok: 0, fail: 0, info: 0 };
    for (const op of history.ops) c[op.outcome]++;
    o.onProgress({ elapsedMs: Math.min(totalMs, history.now()), totalMs, ...c, fault: nemesis?.current ?? 'none', stage });
  };
  let checks: CheckResult[];
  let endOfRun: number;
  const stages: Record<string, number> = {};
  let stageStart = Date.now();
  const stage = (name: string): void => {
    stages[name] = Date.now() - stageStart;
    stageStart = Date.now();
  };
  try {
    progress('starting cluster');
    await cluster.start();
    stage('cluster start');
    history = new History();
    ctx.history = history;
    const nemesis = new NemesisRunner(cluster, network, history, schedule);
    const ticker = setInterval(() => progress('running', nemesis), 250);
    try {
      const conc = workload.concurrency?.(o.concurrency ?? 2 * o.nodes) ?? o.concurrency ?? 2 * o.nodes;
      let nextProcess = 0;
      const workers = Array.from({ length: conc }, (_, i) => new WorkerHandle(i, workerRng.fork(), ctx, (conc * 1000) / o.rate, totalMs, () => nextProcess++));
      await workload.setup?.(ctx);
      const background = workload.background?.(ctx) ?? Promise.resolve();
      const nemesisDone = nemesis.run();
      await Promise.all(workers.map((w) => workload.worker(w)));
      endOfRun = history.now();
      stage('load');
      nemesis.stop();
      await nemesisDone;
      await nemesis.healAll();
      for (const w of workers) w.close();
      if (aborted()) throw new Error('interrupted');
      progress('healing', nemesis);
      if (!(await cluster.waitHealthy(30_000))) history.note('cluster not healthy 30 s after the heal');
      stage('heal');
      progress('final reads', nemesis);
      await workload.finish(ctx);
      stopAll = true;
      await background;
      stage('final reads');
      progress('checking', nemesis);
      checks = [...(await workload.check(ctx)), await checkHashKV(cluster)];
      stage('checks');
    } finally {
      clearInterval(ticker);
      stopAll = true;
    }
  } finally {
    await cluster.stop();
    if (!o.keepData) rmSync(dataDir, { recursive: true, force: true });
  }
  const counts = { ok: 0, fail: 0, info: 0 };
  for (const op of history.ops) if (op.worker >= 0) counts[op.outcome]++;
  const { signal: _s, onProgress: _p, ...options } = o;
  const summary: Summary = {
    run,
    valid: combine(checks.map((c) => c.valid)),
    options,
    schedule,
    faults: history.faults,
    phases: phaseStats(history.ops, history.faults, endOfRun),
    checks,
    counts,
    notes: history.notes,
    durationMs: endOfRun,
    stages,
    peerBytes: cluster.proxyBytes(),
  };
  writeFileSync(path.join(dir, 'history.jsonl'), history.lines().map((l) => JSON.stringify(l)).join('\n') + '\n');
  writeFileSync(path.join(dir, 'summary.json'), JSON.stringify(summary, null, 2));
  for (const [name, value] of Object.entries(workload.artifacts?.() ?? {})) writeFileSync(path.join(dir, name), JSON.stringify(value));
  writeReport(dir, summary, history);
  await sleep(0);
  return { summary, dir };
}
