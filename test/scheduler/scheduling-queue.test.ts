import { describe, expect, it } from 'vitest';
import { PodInfo } from '../../src/scheduler/pod-info.js';
import { defaultProfile } from '../../src/scheduler/profile.js';
import { SchedulingQueue } from '../../src/scheduler/scheduling-queue.js';
import { node, pod } from './fixtures.js';

function setup() {
  const clock = { now: 0 };
  const profile = defaultProfile();
  const q = new SchedulingQueue({ now: () => clock.now, eventsOf: (name) => profile.plugin(name)?.events?.() ?? [] });
  return { clock, q };
}

describe('scheduling queue', () => {
  it('pops by priority, then by arrival', () => {
    const { clock, q } = setup();
    q.add(new PodInfo(pod('low')));
    clock.now = 1;
    q.add(new PodInfo(pod('high', { priority: 100 })));
    clock.now = 2;
    q.add(new PodInfo(pod('low2')));
    expect([q.pop(), q.pop(), q.pop()].map((x) => x?.podInfo.pod.metadata.name)).toEqual(['high', 'low', 'low2']);
    expect(q.pop()).toBeUndefined();
  });

  it('backs off 1 s doubling to 10 s', () => {
    const { q } = setup();
    q.add(new PodInfo(pod('p')));
    const qp = q.pop();
    if (qp === undefined) throw new Error('empty');
    expect([1, 2, 3, 4, 5, 6].map((a) => q.backoffDuration({ ...qp, attempts: a }))).toEqual([1000, 2000, 4000, 8000, 10000, 10000]);
  });

  it('an unschedulable pod waits for an event its rejecting plugin registered, then its backoff', () => {
    const { clock, q } = setup();
    q.add(new PodInfo(pod('p')));
    const qp = q.pop();
    if (qp === undefined) throw new Error('empty');
    q.addUnschedulable(qp, new Set(['TaintToleration']));
    expect(q.stats()).toMatchObject({ unschedulable: 1, active: 0 });
    // A pod deletion cannot untaint a node.
    expect(q.onEvent({ resource: 'Pod', action: 'Delete', oldObj: pod('x') })).toBe(0);
    clock.now = 500;
    expect(q.onEvent({ resource: 'Node', action: 'UpdateNodeTaint', newObj: node('n') })).toBe(1);
    expect(q.stats()).toMatchObject({ unschedulable: 0, backoff: 1 });
    clock.now = 1000;
    q.flush();
    expect(q.pop()?.podInfo.key).toBe('default/p');
  });

  it('an event during the cycle sends the failed pod to backoff, not to wait', () => {
    const { q } = setup();
    q.add(new PodInfo(pod('p')));
    const qp = q.pop();
    if (qp === undefined) throw new Error('empty');
    q.onEvent({ resource: 'Node', action: 'Add', newObj: node('n') });
    q.addUnschedulable(qp, new Set(['NodeResourcesFit']));
    expect(q.stats()).toMatchObject({ unschedulable: 0, backoff: 1, inFlight: 0 });
  });

  it('flushes unschedulable pods after 5 minutes regardless', () => {
    const { clock, q } = setup();
    q.add(new PodInfo(pod('p')));
    const qp = q.pop();
    if (qp === undefined) throw new Error('empty');
    q.addUnschedulable(qp, new Set(['NodeAffinity']));
    clock.now = 299_999;
    q.flush();
    expect(q.stats().unschedulable).toBe(1);
    expect(q.nextFlushAt()).toBe(300_000);
    clock.now = 300_000;
    q.flush();
    expect(q.stats()).toMatchObject({ unschedulable: 0, active: 1 });
  });
});
