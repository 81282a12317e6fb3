// jepsen-lite end to end on real processes: a short mixed run of every workload under partitions,
// kills and pauses must pass, and a stale-read store must be caught. The target comes from
// JEPSEN_TARGET (default setpoint; `etcd` runs the same against real etcd 3.4). Nothing is skipped: a
// missing or stale build, or a missing etcd, fails the runs with the reason (src/harness).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killAllNow } from '../../src/harness/children.js';
import { runTest, type RunOptions } from '../../jepsen-lite/src/runner.js';

const TARGET = (process.env['JEPSEN_TARGET'] ?? 'setpoint') as 'setpoint' | 'etcd';
const SEED = Number(process.env['JEPSEN_SEED'] ?? 7);

const results = mkdtempSync(path.join(os.tmpdir(), 'jepsen-e2e-'));
let failed = false;
afterAll(() => {
  killAllNow();
  if (!failed) rmSync(results, { recursive: true, force: true });
  else console.warn(`jepsen-lite e2e: reports kept in ${results}`);
});

async function run(
  o: Partial<RunOptions> & Pick<RunOptions, 'workload' | 'nemeses' | 'timeS'>,
  expectValid = true,
): Promise<Awaited<ReturnType<typeof runTest>>> {
  const r = await runTest({ target: TARGET, nodes: 3, rate: 100, seed: SEED, resultsDir: results, checkBudgetMs: 30_000, ...o });
  console.log(`${o.workload} on ${TARGET}, seed ${SEED}: ${r.summary.valid}; stages ${JSON.stringify(r.summary.stages)}`);
  if ((r.summary.valid === true) !== expectValid) {
    failed = true;
    console.warn(`${o.workload} seed ${SEED}: unexpected verdict ${r.summary.valid} — ${r.dir}/index.html`);
  }
  return r;
}

describe(`jepsen-lite against ${TARGET}`, () => {
  for (const workload of ['register', 'set', 'watch', 'lock']) {
    it(`${workload}: 18 s under partitions, kills and pauses stays valid, and the faults hit`, { timeout: 120_000 }, async () => {
      const { summary } = await run({ workload, nemeses: ['partition', 'kill', 'pause'], timeS: 18, intervalMs: 1500 });
      const kinds = new Set(summary.faults.map((f) => f.kind.replace(/^partition-.*/, 'partition')));
      expect([...kinds].sort()).toEqual(['kill', 'partition', 'pause']);
      const during = summary.phases.find((p) => p.phase === 'during')!;
      expect(during.seconds).toBeGreaterThan(0);
      // Lock cycles take several round trips each: far fewer operations complete.
      expect(summary.counts.ok).toBeGreaterThan(workload === 'lock' ? 20 : 100);
      expect(summary.checks.map((c) => [c.name, c.valid])).toEqual(summary.checks.map((c) => [c.name, true]));
    });
  }

  it('catches stale reads: a 60 s partition run on the register workload with reads served locally', { timeout: 200_000 }, async () => {
    // Setpoint: the member's unsafe switch (linearizable reads without ReadIndex). etcd: serializable reads.
    const { summary } = await run(
      {
        workload: 'register',
        nemeses: ['partition'],
        timeS: 60,
        ...(TARGET === 'setpoint' ? { env: { SETPOINT_UNSAFE_LOCAL_READS: '1' } } : { serializableReads: true }),
      },
      false,
    );    expect(summary.valid).toBe(false);
    const lin = summary.checks.find((c) => c.name.startsWith('linearizable'))!;
    expect(lin.anomalies.some((a) => a.kind === 'nonlinearizable' && a.explanation.some((t) => /the read returned/.test(t)))).toBe(true);
  });
});
