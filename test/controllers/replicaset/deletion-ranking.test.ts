// Which pods go first on scale-down, case by case as ActivePodsWithRanks orders them.
import { describe, expect, it } from 'vitest';
import { podsToDelete } from '../../../src/controllers/replicaset/deletion-ranking.js';
import { pod, type PodShape } from '../helpers/fake-workloads.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');
const ago = (s: number): string => new Date(NOW - s * 1000).toISOString();

describe('deletion ranking', () => {
  it.each<[string, PodShape, PodShape]>([
    ['unscheduled before scheduled', { node: 'n1' }, {}],
    ['Pending before Running', { node: 'n1' }, { node: 'n1', phase: 'Pending' }],
    ['Unknown before Running', { node: 'n1' }, { node: 'n1', phase: 'Unknown' }],
    ['Pending before Unknown', { node: 'n1', phase: 'Unknown' }, { node: 'n1', phase: 'Pending' }],
    ['not ready before ready', { node: 'n1' }, { node: 'n1', ready: false }],
    ['lower deletion cost first', { node: 'n1', cost: 10 }, { node: 'n1', cost: -5 }],
    ['ready for less time first (log buckets)', { node: 'n1', readySince: ago(4000) }, { node: 'n1', readySince: ago(10) }],
    ['more restarts first', { node: 'n1', readySince: ago(100), restarts: 0 }, { node: 'n1', readySince: ago(100), restarts: 3 }],
    ['newer first', { node: 'n1', readySince: ago(100), created: ago(9000) }, { node: 'n1', readySince: ago(100), created: ago(200) }],
    ['no creation time first', { node: 'n1', readySince: ago(100), created: ago(9000) }, { node: 'n1', readySince: ago(100) }],
  ])('%s', (_name, keep, drop) => {
    for (const order of [[pod('keep', keep), pod('drop', drop)], [pod('drop', drop), pod('keep', keep)]]) {
      expect(podsToDelete(order, order, 1, NOW).map((p) => p.metadata.name)).toEqual(['drop']);
    }
  });

  it('ages in the same power of two fall through to the next rule', () => {
    const a = pod('a', { node: 'n1', readySince: ago(70), restarts: 0 });
    const b = pod('b', { node: 'n1', readySince: ago(100), restarts: 2 });
    // 70 s and 100 s are both in [64, 128): the restarts decide.
    expect(podsToDelete([a, b], [a, b], 1, NOW).map((p) => p.metadata.name)).toEqual(['b']);
  });

  it('pods doubled up on a node with related pods go first', () => {
    const lone = pod('lone', { node: 'n1', readySince: ago(100) });
    const crowded = pod('crowded', { node: 'n2', readySince: ago(100) });
    const sibling = pod('sibling', { node: 'n2', readySince: ago(100) });
    expect(podsToDelete([lone, crowded], [lone, crowded, sibling], 1, NOW).map((p) => p.metadata.name)).toEqual(['crowded']);
  });

  it('deleting more than there are returns them all', () => {
    const ps = [pod('a'), pod('b')];
    expect(podsToDelete(ps, ps, 5, NOW)).toHaveLength(2);
  });
});
