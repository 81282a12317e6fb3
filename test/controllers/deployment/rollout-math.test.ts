// The rollout numbers as tables, from Kubernetes' documented cases and its deployment/util tests.
import { describe, expect, it } from 'vitest';
import type { IntOrString } from '../../../src/api/int-or-string.js';
import type { ReplicaSet } from '../../../src/controllers/apps-types.js';
import { MAX_REPLICAS, DESIRED_REPLICAS } from '../../../src/controllers/deployment/annotations.js';
import { maxSurge, maxUnavailable, newRSNewReplicas, proportionalSizes, resolveFenceposts } from '../../../src/controllers/deployment/rollout-math.js';
import { deployment } from '../helpers/fake-workloads.js';

function rs(name: string, replicas: number, created: number, max?: number): ReplicaSet {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, created)).toISOString(), ...(max !== undefined ? { annotations: { [MAX_REPLICAS]: String(max), [DESIRED_REPLICAS]: '0' } } : {}) },
    spec: { replicas },
  };
}

describe('resolveFenceposts', () => {
  it.each<[IntOrString | undefined, IntOrString | undefined, number, number, number]>([
    ['25%', '25%', 10, 3, 2],
    ['25%', '25%', 4, 1, 1],
    ['25%', '25%', 1, 1, 0],
    ['25%', '25%', 3, 1, 0],
    [0, 0, 5, 0, 1],
    ['0%', '0%', 5, 0, 1],
    [1, 0, 3, 1, 0],
    ['50%', '50%', 5, 3, 2],
    ['100%', '30%', 10, 10, 3],
    [undefined, undefined, 4, 0, 1],
    [2, '10%', 4, 2, 0],
  ])('maxSurge %j, maxUnavailable %j of %i → surge %i, unavailable %i', (s, u, desired, surge, unavailable) => {
    expect(resolveFenceposts(s, u, desired)).toEqual({ surge, unavailable });
  });

  it('maxUnavailable never exceeds the replicas; Recreate has neither', () => {
    expect(maxUnavailable(deployment('d', 2, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 5 } } }))).toBe(2);
    expect(maxUnavailable(deployment('d', 0))).toBe(0);
    const recreate = deployment('d', 10, { strategy: { type: 'Recreate' } });
    expect([maxSurge(recreate), maxUnavailable(recreate)]).toEqual([0, 0]);
  });
});

describe('newRSNewReplicas', () => {
  it.each<[string, number, IntOrString, number[], number, number]>([
    // name, deployment replicas, maxSurge, old RS sizes, new RS size, expected new RS size
    ['surge 1 with 1 old at full size', 1, 1, [1], 0, 1],
    ['surge 0 cannot grow while the old holds every replica', 1, 0, [1], 0, 0],
    ['surge 25% of 10 (3) with 10 old', 10, '25%', [10], 0, 3],
    ['capped by what is still missing', 10, '25%', [2], 7, 10],
    ['total already at the surge limit', 10, '25%', [8], 5, 5],
    ['two old ReplicaSets share the budget', 6, 2, [3, 3], 1, 2],
  ])('%s', (_n, replicas, surge, olds, current, want) => {
    const d = deployment('d', replicas, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: surge, maxUnavailable: 0 } } });
    const newRS = rs('new', current, 9);
    expect(newRSNewReplicas(d, [...olds.map((n, i) => rs(`old${i}`, n, i)), newRS], newRS)).toBe(want);
  });

  it('Recreate asks for every replica at once', () => {
    const d = deployment('d', 7, { strategy: { type: 'Recreate' } });
    expect(newRSNewReplicas(d, [rs('old', 7, 0)], rs('new', 0, 1))).toBe(7);
  });
});

describe('proportional scaling during a rollout', () => {
  // k/k TestScale's shapes: a resize mid-rollout spreads in proportion to the sizes the ReplicaSets were scaled for.
  it('scaling 10 → 20 mid-rollout (5 new, 8 old, max 13) adds in proportion, leftover to the largest', () => {
    const d = deployment('d', 20, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } } });
    const sizes = proportionalSizes(d, [rs('new', 5, 2, 13), rs('old', 8, 1, 13)]);
    // allowed 23, to add 10: new 5*23/13 = 9 (+4), old 8*23/13 = 14 (+6).
    expect(Object.fromEntries(sizes)).toEqual({ new: 9, old: 14 });
  });

  it('scaling down removes in proportion, the larger and older first', () => {
    const d = deployment('d', 5, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } });
    const sizes = proportionalSizes(d, [rs('new', 6, 2, 11), rs('old', 5, 1, 11)]);
    // allowed 6, to remove 5: new round(6*6/11)=3 (-3), old round(5*6/11)=3 (-2).
    expect(Object.fromEntries(sizes)).toEqual({ new: 3, old: 3 });
    expect([...sizes.values()].reduce((a, b) => a + b)).toBe(6);
  });

  it('scaling to zero empties every ReplicaSet', () => {
    const d = deployment('d', 0);
    expect(Object.fromEntries(proportionalSizes(d, [rs('a', 3, 1, 5), rs('b', 2, 2, 5)]))).toEqual({ a: 0, b: 0 });
  });
});
