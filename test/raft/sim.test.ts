// The deterministic simulation as a test: hundreds of seeds with every fault type on, for three and five
// voters, plus the determinism self-check (one seed, two runs, one trace). A failure shows the seed, its
// one-line replay command and the last events before the violation.
import { describe, expect, it } from 'vitest';
import { formatViolation } from '../../src/sim/report.js';
import { DEFAULT_STEPS, runSeed } from '../../src/sim/run-seed.js';
import { expectCoverage } from './helpers/sim-coverage.js';
import { runSeeds, type RunSummary } from '../../src/sim/run-seeds.js';

const FAULT_KINDS = [
  'crash',
  'crash-mid-ready',
  'partition-one',
  'partition-majority',
  'partition-primary',
  'partition-bridge',
  'partition-ring',
  'partition-one-way',
  'member-addLearner',
  'member-addNode',
  'member-removeNode',
  'leader-transfer',
];

/** Empty when the run was clean; otherwise the full report, so the assertion message is the repro. */
function report(s: RunSummary): string {
  const v = s.violations[0];
  return v === undefined ? '' : formatViolation(v);
}

describe('deterministic simulation', () => {
  it('3 voters, seeds 1-500: every safety property holds under every fault, and the cluster recovers', () => {
    const s = runSeeds({ from: 1, to: 500, nodes: 3, steps: DEFAULT_STEPS });
    expect(report(s)).toBe('');
    expect(s.seedsRun).toBe(500);
    expectCoverage(s, 500, FAULT_KINDS);
  });

  it('5 voters, seeds 1-120: the same', () => {
    const s = runSeeds({ from: 1, to: 120, nodes: 5, steps: DEFAULT_STEPS });
    expect(report(s)).toBe('');
    expect(s.seedsRun).toBe(120);
    expectCoverage(s, 120, FAULT_KINDS);
  });

  it('ids near 2^64 (one value as Numbers), 3 and 5 voters: the same; the core carries ids whole', () => {
    for (const nodes of [3, 5]) {
      const s = runSeeds({ from: 1, to: 40, nodes, steps: DEFAULT_STEPS, wideIds: true });
      expect(report(s)).toBe('');
      expect(s.seedsRun).toBe(40);
      expectCoverage(s, 40, FAULT_KINDS);
    }
  });

  it('is deterministic: a seed run twice gives the same trace; different seeds differ', () => {
    const hashes = new Set<number>();
    for (const nodes of [3, 5]) {
      for (const seed of [1, 2, 3, 4]) {
        const a = runSeed({ seed, nodes, steps: DEFAULT_STEPS });
        const b = runSeed({ seed, nodes, steps: DEFAULT_STEPS });
        expect(b.traceHash, `seed ${seed} with ${nodes} voters`).toBe(a.traceHash);
        expect(b.stats).toEqual(a.stats);
        hashes.add(a.traceHash);
      }
    }
    expect(hashes.size).toBe(8);
  });
});
