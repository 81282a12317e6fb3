// The member's own loop under the deterministic simulation (src/sim/member-loop/): the real Ready loop,
// proposals, applier and read barrier on a simulated disk, network and clock. Clean seeds pass every
// check; each bug planted in the loop (server/member/planted-bugs.ts) is caught within the seed budget
// CI runs; a seed replays exactly. Seeds are deterministic, so none of this can flake.
import { describe, expect, it } from 'vitest';
import { formatViolation } from '../../src/sim/report.js';
import { DEFAULT_STEPS, replayCommand } from '../../src/sim/run-seed.js';
import { expectCoverage } from './helpers/sim-coverage.js';
import { runMemberSeed } from '../../src/sim/member-loop/run-member-seed.js';
import { runMemberSeeds } from '../../src/sim/member-loop/run-member-seeds.js';
import type { PlantedLoopBug } from '../../src/server/member/planted-bugs.js';
import type { ViolationKind } from '../../src/sim/violation.js';

/** Clean seeds CI runs (about 0.5 s each on a loaded machine). */
const CLEAN = { from: 1, to: 30 };
/** Where each planted bug must be caught. */
const BUDGET = { from: 1, to: 30 };

const FAULT_KINDS = ['crash', 'partition-one', 'partition-majority', 'partition-primary', 'partition-bridge', 'partition-one-way', 'leader-transfer'];

interface Expectation {
  readonly bug: PlantedLoopBug;
  readonly strict: readonly ViolationKind[];
  /** With `--classic-checks`: only the consequences (lost writes, stale reads, a stuck follower). */
  readonly classic: readonly ViolationKind[];
}

const EXPECTED: readonly Expectation[] = [
  {
    bug: 'ack-before-durable',
    strict: ['ack-not-durable'],
    // A follower that lost entries it acknowledged holds a log behind its leader's idea of it, and never
    // catches up; or a write is lost, and a read or the checker sees it.
    classic: ['convergence', 'linearizable-read', 'state-machine-safety', 'leader-completeness'],
  },
  { bug: 'read-before-applied', strict: ['linearizable-read'], classic: ['linearizable-read'] },
];

describe("the member's loop under simulation", () => {
  it(`3 voters, seeds ${CLEAN.from}-${CLEAN.to}: every check holds under every fault, and the cluster recovers`, async () => {
    const s = await runMemberSeeds({ ...CLEAN, nodes: 3, steps: DEFAULT_STEPS });
    expect(s.violations[0] === undefined ? '' : formatViolation(s.violations[0])).toBe('');
    const seeds = CLEAN.to - CLEAN.from + 1;
    expect(s.seedsRun).toBe(seeds);
    expectCoverage(s, seeds, FAULT_KINDS);
    // Leases granted through Raft, and revoked by the leader's own expiry sweep proposing it.
    expect(s.leasesGranted).toBeGreaterThan(10 * seeds);
    expect(s.leasesRevoked).toBeGreaterThan(5 * seeds);
  });

  it('is deterministic: a seed run twice gives the same trace; different seeds differ', async () => {
    const hashes = new Set<number>();
    for (const seed of [1, 2, 3]) {
      const a = await runMemberSeed({ seed, nodes: 3, steps: DEFAULT_STEPS, memberLoop: true });
      const b = await runMemberSeed({ seed, nodes: 3, steps: DEFAULT_STEPS, memberLoop: true });
      expect(b.traceHash, `seed ${seed}`).toBe(a.traceHash);
      expect(b.stats).toEqual(a.stats);
      hashes.add(a.traceHash);
    }
    expect(hashes.size).toBe(3);
  });

  for (const e of EXPECTED) {
    for (const mode of ['strict', 'classic'] as const) {
      it(`catches ${e.bug} (${mode} checks) within seeds ${BUDGET.from}-${BUDGET.to}`, async () => {
        const s = await runMemberSeeds({ ...BUDGET, nodes: 3, steps: DEFAULT_STEPS, loopBug: e.bug, strict: mode === 'strict' });
        const r = s.violations[0];
        expect(r, `${e.bug} went unnoticed in seeds ${BUDGET.from}-${BUDGET.to}`).toBeDefined();
        if (r?.violation === undefined) return;
        expect(e[mode], formatViolation(r)).toContain(r.violation.kind);
        const again = await runMemberSeed(r.options);
        expect(again.violation?.kind).toBe(r.violation.kind);
        expect(again.violation?.tick).toBe(r.violation.tick);
        expect(again.traceHash).toBe(r.traceHash);
        console.log(`${e.bug} (${mode}): caught after ${s.seedsRun} seed(s), at seed ${r.options.seed}, tick ${r.violation.tick}: ${r.violation.kind} — ${replayCommand(r.options)}`);
      });
    }
  }
});
