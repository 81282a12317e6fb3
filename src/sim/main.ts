#!/usr/bin/env node
// `npm run sim -- --seeds A-B [--nodes 3|5] [--steps N] [--bug NAME] [--member-loop [--loop-bug NAME]]`: runs
// the seeded simulation (of the core alone, or of the member's own loop) over a range of seeds, prints a
// replayable report for the first violation and a summary, exits 1 on failure.
import { Command, InvalidArgumentError, Option } from 'commander';
import { performance } from 'node:perf_hooks';
import { formatSummary, formatViolation } from './report.js';
import { DEFAULT_STEPS, runSeed, type SeedResult, type SimOptions } from './run-seed.js';
import { runMemberSeed } from './member-loop/run-member-seed.js';
import { PLANTED_LOOP_BUGS, type PlantedLoopBug } from '../server/member/planted-bugs.js';
import { addResult, emptySummary } from './run-seeds.js';
import { PLANTED_BUGS, type PlantedBugName } from './seed-setup.js';

function parseRange(v: string): [number, number] {
  const m = /^(\d+)(?:-(\d+))?$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError('expected A-B, e.g. 1-2000');
  const from = Number(m[1]);
  const to = Number(m[2] ?? m[1]);
  if (to < from) throw new InvalidArgumentError('the range is empty');
  return [from, to];
}

function parsePositive(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function parseNodes(v: string): number {
  if (v !== '3' && v !== '5') throw new InvalidArgumentError('expected 3 or 5');
  return Number(v);
}

interface CliOptions {
  seeds: [number, number];
  nodes: number;
  steps: number;
  bug?: PlantedBugName;
  classicChecks?: boolean;
  keepGoing?: boolean;
  checkDeterminism?: boolean;
  wideIds?: boolean;
  memberLoop?: boolean;
  loopBug?: PlantedLoopBug;
  trace: number;
}

/** One seed, of the core alone or (--member-loop) of the member's loop. */
function run(o: SimOptions): SeedResult | Promise<SeedResult> {
  return o.memberLoop === true ? runMemberSeed(o) : runSeed(o);
}

const program = new Command('sim')
  .description('Deterministic simulation of the Raft core under faults: every seed replays exactly.')
  .requiredOption('--seeds <A-B>', 'range of seeds to run', parseRange)
  .option('--nodes <n>', 'initial voters: 3 or 5', parseNodes, 3)
  .option('--steps <ticks>', 'ticks of the fault phase per seed', parsePositive, DEFAULT_STEPS)
  .addOption(new Option('--bug <name>', 'plant a known bug in the core (the run should then fail)').choices(PLANTED_BUGS))
  .option('--classic-checks', 'check only the Raft paper properties, not the direct vote/commit rules')
  .option('--keep-going', 'run every seed even after a violation')
  .option('--check-determinism', 'run each seed twice and fail if the traces differ')
  .option('--wide-ids', 'give members ids near 2^64 (which Numbers cannot tell apart) instead of 1, 2, 3')
  .option('--member-loop', "run the member's own Ready loop, proposals, applier and read barrier on a simulated disk, network and clock")
  .addOption(new Option('--loop-bug <name>', "with --member-loop: plant a known bug in the member's loop (the run should then fail)").choices(PLANTED_LOOP_BUGS))
  .option('--trace <events>', 'events of trace to show for a violation', parsePositive, 60)
  .action(async (o: CliOptions) => {
    if (o.loopBug !== undefined && o.memberLoop !== true) program.error('error: --loop-bug plants a bug in the member loop: add --member-loop');
    if (o.bug !== undefined && o.memberLoop === true) program.error('error: --bug plants a bug in the core: use it without --member-loop (or --loop-bug with it)');
    const summary = emptySummary();
    const started = performance.now();
    let lastProgress = started;
    let nondeterministic = 0;
    for (let seed = o.seeds[0]; seed <= o.seeds[1]; seed++) {
      const opts = {
        seed,
        nodes: o.nodes,
        steps: o.steps,
        traceLines: o.trace,
        ...(o.bug !== undefined ? { bug: o.bug } : {}),
        ...(o.classicChecks === true ? { strict: false } : {}),
        ...(o.wideIds === true ? { wideIds: true } : {}),
        ...(o.memberLoop === true ? { memberLoop: true } : {}),
        ...(o.loopBug !== undefined ? { loopBug: o.loopBug } : {}),
      };
      const r = await run(opts);
      addResult(summary, r);
      if (o.checkDeterminism === true && (await run(opts)).traceHash !== r.traceHash) {
        nondeterministic++;
        console.log(`NONDETERMINISM: seed ${seed} produced two different traces`);
      }
      if (r.violation !== undefined) {
        console.log(formatViolation(r));
        if (o.keepGoing !== true) break;
      }
      const now = performance.now();
      if (now - lastProgress > 5000) {
        lastProgress = now;
        console.log(`... seed ${seed}, ${(summary.seedsRun / ((now - started) / 1000)).toFixed(1)} seeds/s`);
      }
    }
    console.log(formatSummary(summary, (performance.now() - started) / 1000));
    if (summary.violations.length > 0 || nondeterministic > 0) process.exitCode = 1;
  });

await program.parseAsync();
