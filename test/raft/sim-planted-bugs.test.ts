// The simulation must catch each bug the core can plant (RaftConfig.bugs) within the seed budget CI runs.
// Seeds are deterministic, so "caught within 1-300" either always holds or never does: not flaky.
import { describe, expect, it } from 'vitest';
import { formatViolation } from '../../src/sim/report.js';
import { DEFAULT_STEPS, replayCommand, runSeed } from '../../src/sim/run-seed.js';
import { firstViolation } from '../../src/sim/run-seeds.js';
import type { PlantedBugName } from '../../src/sim/seed-setup.js';
import type { ViolationKind } from '../../src/sim/violation.js';

const BUDGET = { from: 1, to: 300 };

interface Expectation {
  readonly bug: PlantedBugName;
  /** With every check on. */
  readonly strict: readonly ViolationKind[];
  /** With only the Raft paper's properties and linearizable reads (`--classic-checks`). */
  readonly classic?: readonly ViolationKind[];
}

const EXPECTED: readonly Expectation[] = [
  { bug: 'voteTwice', strict: ['vote-changed', 'election-safety'], classic: ['election-safety'] },
  // Its classic consequence (Fig. 8: a committed entry overwritten) needs a rare schedule; the direct
  // rule (a leader commits only entries of its own term) sees the first wrong commit.
  { bug: 'commitPreviousTermByCounting', strict: ['commit-previous-term'] },
  { bug: 'readWithoutQuorum', strict: ['linearizable-read'], classic: ['linearizable-read'] },
];

describe('the simulation catches every planted bug', () => {
  for (const e of EXPECTED) {
    for (const mode of ['strict', 'classic'] as const) {
      const kinds = e[mode];
      if (kinds === undefined) continue;
      it(`${e.bug} (${mode} checks) within seeds ${BUDGET.from}-${BUDGET.to}`, () => {
        const r = firstViolation({ ...BUDGET, nodes: 3, steps: DEFAULT_STEPS, bug: e.bug, strict: mode === 'strict' });
        expect(r, `${e.bug} went unnoticed in seeds ${BUDGET.from}-${BUDGET.to}`).toBeDefined();
        if (r?.violation === undefined) return;
        expect(kinds, formatViolation(r)).toContain(r.violation.kind);
        // The report replays: the same seed fails the same way at the same tick.
        const again = runSeed(r.options);
        expect(again.violation?.kind).toBe(r.violation.kind);
        expect(again.violation?.tick).toBe(r.violation.tick);
        expect(again.traceHash).toBe(r.traceHash);
        console.log(`${e.bug} (${mode}): caught at seed ${r.options.seed}, tick ${r.violation.tick}: ${r.violation.kind} — ${replayCommand(r.options)}`);
      });
    }
  }

  it('without a planted bug the same seeds are clean', () => {
    // Guards against a checker that fires on everything: the budget passes on the real core.
    for (let seed = BUDGET.from; seed <= 20; seed++) expect(runSeed({ seed, nodes: 3, steps: DEFAULT_STEPS }).violation).toBeUndefined();
  });
});
