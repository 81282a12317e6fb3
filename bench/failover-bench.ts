// bench:failover — the both-leases takeover (issue 27's target: ≤ 3 s median of 5 trials with Setpoint's
// default leader-election timing, 2 s lease / 1.5 s renew deadline / 0.4 s retry). Three `setpoint server`
// members on free ports, simulated nodes and a Deployment served through the first member; each trial hands
// both the kube-scheduler and the kube-controller-manager Leases to one other member, SIGKILLs that
// member's whole process group, and times from the kill until other members' identities hold both Leases
// (as a watch on the Lease objects through a surviving API server sees it), then the Deployment scaled right
// after the kill converging. Prints one Markdown table and the median. BENCH_FAILOVER_TRIALS (5).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoopsTakeover, type TakeoverTrial } from '../src/harness/loops-takeover.js';
import { percentile } from './api/stats.js';
import { markdownTable } from './markdown-table.js';

const TRIALS = Number(process.env.BENCH_FAILOVER_TRIALS ?? 5);
const TARGET_S = 3;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-failover-'));
  const rig = await LoopsTakeover.start(dir);
  const trials: TakeoverTrial[] = [];
  try {
    for (let i = 0; i < TRIALS; i++) {
      const t = await rig.trial();
      trials.push(t);
      process.stderr.write(`trial ${i + 1}/${TRIALS}: ${t.victim} killed, both Leases taken over in ${t.takeoverSeconds.toFixed(2)} s\n`);
    }
  } finally {
    await rig.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const rows = [
    ['trial', 'killed', 'both Leases taken over (s)', 'acquireTime after the kill (s)', 'scheduler now on', 'controller manager now on', 'scale converged after the kill (s)'],
    ...trials.map((t, i) => [String(i + 1), t.victim, t.takeoverSeconds.toFixed(2), t.acquiredSeconds.toFixed(2), t.newHolders.scheduler, t.newHolders['controller-manager'], t.convergedSeconds.toFixed(2)]),
  ];
  const median = percentile(trials.map((t) => t.takeoverSeconds), 0.5);
  console.log(markdownTable(rows));
  console.log(`\nmedian takeover ${median.toFixed(2)} s over ${trials.length} trials (target ≤ ${TARGET_S} s: ${median <= TARGET_S ? 'met' : 'NOT met'})`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
