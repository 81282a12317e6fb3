// What the node lifecycle controller, the garbage collector and the namespace controller put in their
// reconcile records (docs/why-records.md), built from one reconcile's facts, and how `why` judges a
// Terminating namespace.
import { describe, expect, it } from 'vitest';
import { CONFIGMAPS, PODS } from '../../src/client/resource-types.js';
import type { GraphNode } from '../../src/controllers/garbage-collector/dependency-graph.js';
import { foregroundReport } from '../../src/controllers/garbage-collector/gc-record.js';
import { namespaceLoopReport } from '../../src/controllers/namespace/namespace-record.js';
import { nodeLoopReport, type NodeReconcileFacts } from '../../src/controllers/node-lifecycle/node-record.js';
import { judge } from '../../src/why/kind-rules.js';

const UNREACHABLE_NS = { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' };
const UNREACHABLE_NE = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-12-03T12:00:00Z' };

const silent: NodeReconcileFacts = {
  ready: 'Unknown',
  readyReason: 'NodeStatusUnknown',
  readyMessage: 'Kubelet stopped posting node status.',
  silentForMs: 41_400,
  graceMs: 40_000,
  leaseAgeMs: 52_000,
  markedUnknown: true,
  taintsBefore: [],
  taintsAfter: [UNREACHABLE_NS, UNREACHABLE_NE],
  eviction: { now: 2, later: 1, never: 1 },
  podsMarkedNotReady: 4,
  heldBackMs: undefined,
};

describe('node lifecycle record', () => {
  it('a silent node: Ready seen against the silence and the lease age, the taints put on and the pods they evict', () => {
    expect(nodeLoopReport(silent, 'u1')).toEqual({
      uid: 'u1',
      gap: {
        desired: { ready: 'True', silentForSeconds: '<40' },
        actual: { ready: 'Unknown', silentForSeconds: 41, leaseAgeSeconds: 52, taints: ['node.kubernetes.io/unreachable:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute'] },
      },
      action: 'mark Ready=Unknown, taint node.kubernetes.io/unreachable:NoSchedule, node.kubernetes.io/unreachable:NoExecute, evict 3 pods (1 after their tolerationSeconds), mark 4 pods not ready',
      outcome: 'waiting',
      message: 'waiting for the node to report Ready: Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.)',
    });
  });

  it('the eviction rate holding the NoExecute taint back is a rate-limited wait', () => {
    const r = nodeLoopReport({ ...silent, taintsAfter: [UNREACHABLE_NS], eviction: undefined, podsMarkedNotReady: 0, heldBackMs: 10_000 }, undefined);
    expect(r.action).toBe('mark Ready=Unknown, taint node.kubernetes.io/unreachable:NoSchedule');
    expect(r.outcome).toBe('waiting');
    expect(r.message).toBe('rate-limited eviction: the NoExecute taint is held back by --node-eviction-rate (next token in 10s); Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.)');
    expect(r).not.toHaveProperty('uid');
  });

  it('a node Ready again: the taints taken off, outcome ok; a node that never posted says so', () => {
    const back = nodeLoopReport({ ...silent, ready: 'True', readyReason: 'KubeletReady', markedUnknown: false, silentForMs: 0, leaseAgeMs: undefined, taintsBefore: [UNREACHABLE_NS, UNREACHABLE_NE], taintsAfter: [], eviction: undefined, podsMarkedNotReady: 0 }, 'u1');
    expect(back).toMatchObject({ action: 'untaint node.kubernetes.io/unreachable:NoSchedule, node.kubernetes.io/unreachable:NoExecute', outcome: 'ok', gap: { actual: { ready: 'True', silentForSeconds: 0, taints: [] } } });
    expect(back).not.toHaveProperty('message');
    const never = nodeLoopReport({ ...silent, ready: undefined, markedUnknown: false, taintsAfter: [], eviction: undefined, podsMarkedNotReady: 0 }, 'u1');
    expect(never).toMatchObject({ action: 'none', outcome: 'waiting', message: 'waiting for the node to report Ready: no Ready condition', gap: { actual: { ready: 'none' } } });
  });
});

describe('garbage collector record', () => {
  const owner: GraphNode = { uid: 'o', type: CONFIGMAPS, namespace: 'default', name: 'owner', owners: [], beingDeleted: true, deletingDependents: true, orphaning: false };
  const dep = (name: string, block: boolean, beingDeleted = false): GraphNode => ({
    uid: `d-${name}`,
    type: PODS,
    namespace: 'default',
    name,
    owners: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'o', blockOwnerDeletion: block }],
    beingDeleted,
    deletingDependents: false,
    orphaning: false,
  });

  it('names the dependents with blockOwnerDeletion that hold a foreground deletion, and counts the others', () => {
    expect(foregroundReport(owner, [dep('a', true, true), dep('b', true), dep('c', false)])).toEqual({
      uid: 'o',
      gap: { desired: { blockingDependents: 0 }, actual: { blockingDependents: 2, beingDeleted: 1, otherDependents: 1 } },
      action: 'wait for 2 dependents with blockOwnerDeletion',
      outcome: 'waiting',
      message: 'foreground deletion waits for dependents with blockOwnerDeletion: pods/default/a (being deleted), pods/default/b',
      details: {
        blocking: [
          { resource: 'pods', namespace: 'default', name: 'a', uid: 'd-a', beingDeleted: true },
          { resource: 'pods', namespace: 'default', name: 'b', uid: 'd-b', beingDeleted: false },
        ],
      },
    });
  });

  it('lists at most five in the message and twenty in the details; none left is ok', () => {
    const many = Array.from({ length: 23 }, (_, i) => dep(`p${i}`, true));
    const r = foregroundReport(owner, many);
    expect(r.message).toMatch(/pods\/default\/p4 and 18 more$/);
    expect(r.details).toMatchObject({ blockingOmitted: 3 });
    expect((r.details as { blocking: unknown[] }).blocking).toHaveLength(20);
    expect(foregroundReport(owner, [dep('c', false)])).toEqual({
      uid: 'o',
      gap: { desired: { blockingDependents: 0 }, actual: { blockingDependents: 0, beingDeleted: 0, otherDependents: 1 } },
      action: 'remove finalizer foregroundDeletion',
      outcome: 'ok',
    });
  });
});

describe('namespace controller record', () => {
  const none = new Map<string, number>();
  it('what remains while Terminating: objects per resource and their finalizers, with the conditions’ messages', () => {
    const r = namespaceLoopReport({ discoveryFailures: [], deleteFailures: [], remaining: new Map([['pods.', 2], ['configmaps.', 1]]), finalizers: new Map([['example.com/hold', 1]]) }, 'kubernetes', 'ns-uid');
    expect(r).toEqual({
      uid: 'ns-uid',
      gap: { desired: { remaining: 0 }, actual: { remaining: 3, resources: { 'configmaps.': 1, 'pods.': 2 }, finalizers: { 'example.com/hold': 1 } } },
      action: 'delete content (3 objects in 2 resources remain)',
      outcome: 'waiting',
      message:
        'SomeResourcesRemain: Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 resource instances; SomeFinalizersRemain: Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    });
  });

  it('a failed deletion is an error; an empty namespace is finalized', () => {
    const failed = namespaceLoopReport({ discoveryFailures: [], deleteFailures: ['widgets.example.com: boom'], remaining: none, finalizers: none }, 'kubernetes', undefined);
    expect(failed).toMatchObject({ outcome: 'error', gap: { actual: { remaining: 0, failures: 1 } }, message: 'ContentDeletionFailed: Failed to delete all resource types, 1 remaining: widgets.example.com: boom' });
    expect(namespaceLoopReport({ discoveryFailures: [], deleteFailures: [], remaining: none, finalizers: none }, 'kubernetes', undefined)).toEqual({
      gap: { desired: { remaining: 0 }, actual: { remaining: 0 } },
      action: 'remove finalizer kubernetes',
      outcome: 'ok',
    });
  });
});

describe('why: a Namespace', () => {
  it('Active is converged; Terminating is not, explained by the namespace controller’s True conditions', () => {
    expect(judge('Namespace', { metadata: { name: 'a' }, status: { phase: 'Active' } }, { now: 0 })).toEqual({ converged: true, state: 'Active', findings: [] });
    const v = judge(
      'Namespace',
      {
        metadata: { name: 'a', deletionTimestamp: '2026-12-03T12:00:00Z' },
        spec: { finalizers: ['kubernetes'] },
        status: {
          phase: 'Terminating',
          conditions: [
            { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: 'Some resources are remaining: pods. has 2 resource instances', lastTransitionTime: '2026-12-03T12:00:01Z' },
            { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
          ],
        },
      },
      { now: 0 },
    );
    expect(v.converged).toBe(false);
    expect(v.state).toBe('Terminating since 2026-12-03T12:00:00Z');
    expect(v.findings.map((f) => [f.severity, f.summary])).toEqual([['warning', 'NamespaceContentRemaining=True SomeResourcesRemain: Some resources are remaining: pods. has 2 resource instances']]);
    const held = judge('Namespace', { metadata: { name: 'a', deletionTimestamp: '2026-12-03T12:00:00Z' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating' } }, { now: 0 });
    expect(held.findings.map((f) => f.summary)).toEqual(['Terminating, held by finalizers kubernetes']);
  });
});
