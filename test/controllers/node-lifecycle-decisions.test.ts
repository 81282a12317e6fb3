// The node lifecycle's pure decisions on a ManualClock: when a node counts as silent, which taints its
// Ready condition calls for, and when a pod under NoExecute taints is evicted.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/client/manual-clock.js';
import { NodeHealthTracker } from '../../src/controllers/node-lifecycle/node-health.js';
import { desiredTaints, startsNoExecute, withoutNoExecute } from '../../src/controllers/node-lifecycle/node-taints.js';
import type { NodeObject, NodeTaint } from '../../src/controllers/node-lifecycle/node-types.js';
import { EvictionTimer, evictionDelay } from '../../src/controllers/node-lifecycle/taint-eviction.js';

const limits = { gracePeriodMs: 40_000, startupGracePeriodMs: 60_000 };
const unreachable = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
const notReady = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };

describe('node health', () => {
  it('is silent only after the grace period without a heartbeat or lease renewal', () => {
    const clock = new ManualClock();
    const t = new NodeHealthTracker(clock);
    t.observe('n1', 'hb-1', 'lease-1');
    clock.advance(39_999);
    expect(t.judge('n1', true, limits)).toEqual({ kind: 'heard', silentForMs: 39_999, graceLeftMs: 1 });
    // The same heartbeat seen again does not restart the clock; a lease renewal does.
    t.observe('n1', 'hb-1', 'lease-1');
    clock.advance(1);
    expect(t.judge('n1', true, limits)).toEqual({ kind: 'silent', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
    t.observe('n1', 'hb-1', 'lease-2');
    expect(t.judge('n1', true, limits).kind).toBe('heard');
  });

  it('gives a node that never posted Ready the startup grace', () => {
    const clock = new ManualClock();
    const t = new NodeHealthTracker(clock);
    t.observe('new', undefined, undefined);
    clock.advance(45_000);
    expect(t.judge('new', false, limits).kind).toBe('heard');
    clock.advance(15_000);
    expect(t.judge('new', false, limits)).toMatchObject({ kind: 'silent', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.' });
  });
});

describe('node taints from the Ready condition', () => {
  const node = (ready: 'True' | 'False' | 'Unknown' | undefined, taints: NodeTaint[] = []): NodeObject => ({
    metadata: { name: 'n' },
    spec: { taints },
    status: { conditions: ready === undefined ? [] : [{ type: 'Ready', status: ready }] },
  });
  const now = '2026-01-01T00:00:00Z';

  it('unreachable for Unknown, not-ready for False, none for True; others kept; timeAdded kept', () => {
    const other = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
    expect(desiredTaints(node('Unknown', [other]), now)).toEqual([other, { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }, { ...unreachable, timeAdded: now }]);
    const tainted = desiredTaints(node('Unknown'), '2025-12-31T00:00:00Z');
    expect(desiredTaints(node('Unknown', tainted), now)).toEqual(tainted);
    expect(desiredTaints(node('False', tainted), now)).toEqual([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }, { ...notReady, timeAdded: now }]);
    expect(desiredTaints(node('True', [...tainted, other]), now)).toEqual([other]);
    expect(desiredTaints(node(undefined), now)).toEqual([]);
  });

  it('rate-limits only a node newly tainted NoExecute, not a swap of unreachable for not-ready', () => {
    const unknown = desiredTaints(node('Unknown'), now);
    expect(startsNoExecute([], unknown)).toBe(true);
    expect(startsNoExecute(unknown, desiredTaints(node('False', unknown), now))).toBe(false);
    expect(startsNoExecute([{ key: 'other', effect: 'NoExecute' }], unknown)).toBe(true);
    expect(withoutNoExecute(unknown)).toEqual([{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }]);
  });
});

describe('taint-based eviction', () => {
  it('evicts at once without a matching toleration, after the shortest tolerationSeconds, never when tolerated forever', () => {
    expect(evictionDelay([], [])).toEqual({ kind: 'never' });
    expect(evictionDelay([unreachable], [])).toEqual({ kind: 'after', ms: 0 });
    expect(evictionDelay([unreachable], [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }])).toEqual({ kind: 'after', ms: 0 });
    expect(evictionDelay([unreachable], [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }])).toEqual({ kind: 'after', ms: 300_000 });
    expect(evictionDelay([unreachable], [{ operator: 'Exists' }])).toEqual({ kind: 'never' });
    expect(evictionDelay([unreachable, notReady], [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', tolerationSeconds: 30 }, { operator: 'Exists', tolerationSeconds: 10 }])).toEqual({ kind: 'after', ms: 10_000 });
    expect(evictionDelay([unreachable], [{ operator: 'Exists', tolerationSeconds: 0 }])).toEqual({ kind: 'after', ms: 0 });
  });

  it('counts tolerationSeconds from when the pod was first seen under the taint, and cancels when the taint goes', () => {
    const clock = new ManualClock();
    const timer = new EvictionTimer(clock);
    const delay = { kind: 'after', ms: 300_000 } as const;
    expect(timer.plan('ns/p', delay)).toEqual({ kind: 'wait', ms: 300_000 });
    clock.advance(200_000);
    expect(timer.plan('ns/p', delay)).toEqual({ kind: 'wait', ms: 100_000 });
    clock.advance(100_000);
    expect(timer.plan('ns/p', delay)).toEqual({ kind: 'evict' });
    timer.forget('ns/p');
    expect(timer.plan('ns/q', delay)).toEqual({ kind: 'wait', ms: 300_000 });
    expect(timer.plan('ns/q', { kind: 'never' })).toEqual({ kind: 'none', cancelled: true });
    expect(timer.plan('ns/q', { kind: 'never' })).toEqual({ kind: 'none', cancelled: false });
  });
});
