// Proof that a simulation run's faults and checks actually happened, not just that nothing failed:
// shared by the core's simulation tests and the member loop's.
import { expect } from 'vitest';
import { RECOVER_BOUND } from '../../../src/sim/run-seed.js';
import type { RunSummary } from '../../../src/sim/run-seeds.js';

export function expectCoverage(s: RunSummary, seeds: number, faultKinds: readonly string[]): void {
  for (const k of faultKinds) expect(s.faults.get(k) ?? 0, `fault ${k} was injected`).toBeGreaterThan(0);
  expect(s.messagesDropped).toBeGreaterThan(0);
  expect(s.messagesDuplicated).toBeGreaterThan(0);
  expect(s.elections).toBeGreaterThan(seeds);
  expect(s.commits).toBeGreaterThan(50 * seeds);
  expect(s.writesAcked).toBeGreaterThan(50 * seeds);
  expect(s.readsChecked).toBeGreaterThan(20 * seeds);
  expect(s.maxRecoverTicks).toBeGreaterThan(0);
  expect(s.maxRecoverTicks).toBeLessThanOrEqual(RECOVER_BOUND);
}
