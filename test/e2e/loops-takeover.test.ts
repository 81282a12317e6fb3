// The both-leases takeover on three `setpoint server` members with Setpoint's default leader-election
// timing: the member whose loops hold both the kube-scheduler and the kube-controller-manager Leases is
// SIGKILLed as a machine failure (its whole process group); identities of the other members take both
// Leases over, and a Deployment scaled right after the kill converges. One trial by default (five took
// close to 3 minutes; TAKEOVER_TRIALS=5 runs them): each takeover time and their median are printed, not
// asserted (the issue's ≤ 3 s median of 5 is a performance target: `npm run bench:failover` checks it).
// Needs `npm run build`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentile } from '../../bench/api/stats.js';
import { LoopsTakeover } from '../../src/harness/loops-takeover.js';

const TRIALS = Number(process.env.TAKEOVER_TRIALS ?? 1);

describe('SIGKILL of the member holding both loops’ Leases', () => {
  let dir: string;
  let rig: LoopsTakeover | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'loops-takeover-'));
    rig = await LoopsTakeover.start(dir);
  }, 300_000);

  afterAll(async () => {
    await rig?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the other members take both Leases over and a scale made right after is carried out', async () => {
    const times: number[] = [];
    for (let i = 0; i < TRIALS; i++) {
      const t = await rig!.trial();
      times.push(t.takeoverSeconds);
      console.log(`trial ${i + 1}: ${t.victim} killed; both Leases taken over in ${t.takeoverSeconds.toFixed(2)} s (scheduler on ${t.newHolders.scheduler}, controller manager on ${t.newHolders['controller-manager']}); scaled to ${t.replicas}, converged ${t.convergedSeconds.toFixed(2)} s after the kill`);
      for (const holder of Object.values(t.newHolders)) expect(['m1', 'm2', 'm3'].filter((m) => m !== t.victim)).toContain(holder);
    }
    console.log(`median takeover over ${times.length} trials: ${percentile(times, 0.5).toFixed(2)} s (target ≤ 3 s)`);
  }, 600_000);
});
