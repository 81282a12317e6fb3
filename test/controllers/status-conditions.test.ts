// Conditions kept as Kubernetes keeps them, and the namespace deletion conditions built from a report.
import { describe, expect, it } from 'vitest';
import { deletionConditions } from '../../src/controllers/namespace/deletion-conditions.js';
import { sameConditions, setCondition } from '../../src/controllers/status-conditions.js';

describe('status conditions', () => {
  it('keeps lastTransitionTime while the status stays, moves it when the status changes', () => {
    const t0 = new Date('2026-01-01T00:00:00.123Z');
    const t1 = new Date('2026-01-01T00:01:00Z');
    const a = setCondition([], { type: 'Ready', status: 'True', reason: 'KubeletReady' }, t0);
    expect(a).toEqual([{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastTransitionTime: '2026-01-01T00:00:00Z' }]);
    const b = setCondition(a, { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'm' }, t1);
    expect(b[0]?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    const c = setCondition(b, { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }, t1);
    expect(c[0]?.lastTransitionTime).toBe('2026-01-01T00:01:00Z');
    expect(sameConditions(a, setCondition(a, { type: 'Ready', status: 'True', reason: 'KubeletReady' }, t1))).toBe(true);
    expect(sameConditions(a, b)).toBe(false);
  });
});

describe('namespace deletion conditions', () => {
  it('say all is well when nothing remains', () => {
    const c = deletionConditions({ discoveryFailures: [], deleteFailures: [], remaining: new Map(), finalizers: new Map() });
    expect(c.map((x) => `${x.type}=${x.status} ${x.reason}`)).toEqual([
      'NamespaceDeletionDiscoveryFailure=False ResourcesDiscovered',
      'NamespaceDeletionGroupVersionParsingFailure=False ParsedGroupVersions',
      'NamespaceDeletionContentFailure=False ContentDeleted',
      'NamespaceContentRemaining=False ContentRemoved',
      'NamespaceFinalizersRemaining=False ContentHasNoFinalizers',
    ]);
  });

  it('name what remains, what holds it and what failed, in Kubernetes words', () => {
    const c = deletionConditions({
      discoveryFailures: ['example.com/v1: the server is down'],
      deleteFailures: ['pods.: forbidden'],
      remaining: new Map([
        ['pods.', 2],
        ['configmaps.', 1],
      ]),
      finalizers: new Map([['example.com/hold', 1]]),
    });
    const byType = Object.fromEntries(c.map((x) => [x.type, x]));
    expect(byType['NamespaceDeletionDiscoveryFailure']).toMatchObject({ status: 'True', reason: 'DiscoveryFailed', message: 'Discovery failed for some groups, 1 failing: example.com/v1: the server is down' });
    expect(byType['NamespaceDeletionContentFailure']).toMatchObject({ status: 'True', reason: 'ContentDeletionFailed', message: 'Failed to delete all resource types, 1 remaining: pods.: forbidden' });
    expect(byType['NamespaceContentRemaining']?.message).toBe('Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 resource instances');
    expect(byType['NamespaceFinalizersRemaining']?.message).toBe('Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
  });
});
