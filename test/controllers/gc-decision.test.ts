// The collector's pure decisions: the dependency graph's edges as objects come and go, and what
// attemptToDelete does for each mix of solid, dangling and waiting owners (Kubernetes' table).
import { describe, expect, it } from 'vitest';
import type { KubeObject, OwnerReference } from '../../src/client/kube-object.js';
import { PODS, REPLICASETS } from '../../src/client/resource-types.js';
import { DependencyGraph, nodeOf } from '../../src/controllers/garbage-collector/dependency-graph.js';
import { decide, type OwnerState } from '../../src/controllers/garbage-collector/gc-decision.js';

const ref = (uid: string, block = false): OwnerReference => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: uid, uid, blockOwnerDeletion: block });
const obj = (uid: string, owners: OwnerReference[] = [], extra: Partial<NonNullable<KubeObject['metadata']>> = {}): KubeObject => ({
  metadata: { name: uid, namespace: 'ns', uid, ownerReferences: owners, ...extra },
});

describe('dependency graph', () => {
  it('keeps reverse edges through updates and removals, and knows blocking dependents', () => {
    const g = new DependencyGraph();
    g.upsert(nodeOf(REPLICASETS, obj('rs', [], { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] }))!);
    g.upsert(nodeOf(PODS, obj('p1', [ref('rs', true)]))!);
    g.upsert(nodeOf(PODS, obj('p2', [ref('rs')]))!);
    expect(g.node('rs')?.deletingDependents).toBe(true);
    expect(g.dependents('rs').map((n) => n.uid).sort()).toEqual(['p1', 'p2']);
    expect(g.blockingDependents('rs').map((n) => n.uid)).toEqual(['p1']);
    g.upsert(nodeOf(PODS, obj('p1', []))!);
    expect(g.dependents('rs').map((n) => n.uid)).toEqual(['p2']);
    // The owner leaving the graph keeps its dependents' edges: they still name it.
    g.remove('rs');
    expect(g.dependents('rs').map((n) => n.uid)).toEqual(['p2']);
    g.remove('p2');
    expect(g.dependents('rs')).toEqual([]);
    expect(g.size).toBe(1);
  });

  it('marks orphaning owners and ignores objects without a uid', () => {
    expect(nodeOf(PODS, { metadata: { name: 'x' } })).toBeUndefined();
    expect(nodeOf(PODS, obj('o', [], { deletionTimestamp: 't', finalizers: ['orphan'] }))?.orphaning).toBe(true);
    expect(nodeOf(PODS, obj('o', [], { finalizers: ['orphan'] }))?.orphaning).toBe(false);
  });
});

describe('attemptToDelete decision', () => {
  const facts = (states: Record<string, OwnerState>, more: { hasDependents?: boolean; cyclic?: boolean; finalizers?: readonly string[] } = {}) => ({
    owners: Object.keys(states).map((u) => ref(u)),
    ownerState: new Map(Object.entries(states)),
    hasDependents: more.hasDependents ?? false,
    dependentDeletingDependents: more.cyclic ?? false,
    finalizers: more.finalizers ?? [],
  });

  it.each([
    ['all owners solid', { a: 'solid' }, {}, { kind: 'none' }],
    ['a solid and a dangling owner', { a: 'solid', b: 'dangling' }, {}, { kind: 'removeReferences', uids: ['b'] }],
    ['a solid and a waiting owner', { a: 'solid', b: 'waiting' }, {}, { kind: 'removeReferences', uids: ['b'] }],
    ['only dangling owners', { a: 'dangling', b: 'dangling' }, {}, { kind: 'delete', policy: 'Background' }],
    ['a waiting owner, no dependents of its own', { a: 'waiting' }, {}, { kind: 'delete', policy: 'Background' }],
    ['a waiting owner, with dependents', { a: 'waiting' }, { hasDependents: true }, { kind: 'delete', policy: 'Foreground' }],
    ['a waiting owner, a dependent deleting its own', { a: 'waiting' }, { hasDependents: true, cyclic: true }, { kind: 'unblockThenDelete' }],
    ['dangling, orphan finalizer already there', { a: 'dangling' }, { finalizers: ['orphan'] }, { kind: 'delete', policy: 'Orphan' }],
    ['dangling, foreground finalizer already there', { a: 'dangling' }, { finalizers: ['foregroundDeletion'] }, { kind: 'delete', policy: 'Foreground' }],
  ] as const)('%s', (_name, states, more, want) => {
    expect(decide(facts(states as Record<string, OwnerState>, more))).toEqual(want);
  });

  it('does nothing for an object without owners', () => {
    expect(decide(facts({}))).toEqual({ kind: 'none' });
  });
});
