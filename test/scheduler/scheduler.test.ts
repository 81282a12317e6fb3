// The scheduler loop over an in-memory sink: the I/O it would do (bindings, status, events) is recorded
// and answered as the API server would, with the informer's confirmation fed back.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/scheduler/api-types.js';
import { podKey } from '../../src/scheduler/api-types.js';
import type { SchedulingDiagnosis } from '../../src/scheduler/diagnosis.js';
import { defaultProfile } from '../../src/scheduler/profile.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import type { SchedulerSink } from '../../src/scheduler/scheduler.js';
import { firstOfEquals, node, pod } from './fixtures.js';

function setup(failBind = new Set<string>()) {
  const clock = { now: 0 };
  const bound = new Map<string, string>();
  const failures = new Map<string, { message: string; diagnosis: SchedulingDiagnosis | undefined }>();
  const sink: SchedulerSink = {
    bind: async (p, n) => {
      if (failBind.has(p.metadata.name)) throw new Error('conflict');
      bound.set(podKey(p), n);
      // The informer then delivers the bound pod.
      queueMicrotask(() => s.onPodUpdate(p, { ...p, spec: { ...p.spec, nodeName: n } }));
    },
    unschedulable: async (p, message, diagnosis) => {
      failures.set(podKey(p), { message, diagnosis });
    },
  };
  const s: Scheduler = new Scheduler({ profile: defaultProfile(), sink, now: () => clock.now, randInt: firstOfEquals });
  const drain = async () => {
    while (s.scheduleOne()) await s.idle();
    await s.idle();
  };
  return { s, clock, bound, failures, drain };
}

describe('scheduler loop', () => {
  it('binds every pod once, never past a node\'s capacity, and reports the rest with the exact message', async () => {
    const { s, clock, bound, failures, drain } = setup();
    for (let i = 0; i < 3; i++) s.onNodeAdd(node(`n${i}`, { cpu: '2' }));
    const pods: Pod[] = Array.from({ length: 8 }, (_, i) => pod(`p${i}`, { cpu: '1' }));
    for (const p of pods) {
      clock.now++;
      s.onPodAdd(p);
    }
    await drain();
    expect(bound.size).toBe(6);
    for (let i = 0; i < 3; i++) expect([...bound.values()].filter((n) => n === `n${i}`)).toHaveLength(2);
    expect(failures.size).toBe(2);
    const f = failures.get('default/p6');
    expect(f?.message).toBe('0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.');
    expect(f?.diagnosis?.plugins).toEqual({ NodeResourcesFit: 3 });
    expect(s.queue.stats()).toMatchObject({ unschedulable: 2, active: 0 });
  });

  it('a deleted pod frees room and the waiting pod is retried after its backoff', async () => {
    const { s, clock, bound, drain } = setup();
    s.onNodeAdd(node('n0', { cpu: '1' }));
    s.onPodAdd(pod('a', { cpu: '1' }));
    s.onPodAdd(pod('b', { cpu: '1' }));
    await drain();
    expect([...bound.keys()]).toEqual(['default/a']);
    s.onPodDelete({ ...pod('a', { cpu: '1' }), spec: { ...pod('a', { cpu: '1' }).spec, nodeName: 'n0' } });
    expect(s.queue.stats().backoff).toBe(1);
    clock.now = 1000;
    s.queue.flush();
    await drain();
    expect(bound.get('default/b')).toBe('n0');
    expect(s.diagnoses.size).toBe(0);
  });

  it('a failed binding gives the node back and retries', async () => {
    const failBind = new Set(['a']);
    const { s, clock, bound, drain } = setup(failBind);
    s.onNodeAdd(node('n0', { cpu: '1' }));
    s.onPodAdd(pod('a', { cpu: '1' }));
    await drain();
    expect(bound.size).toBe(0);
    expect(s.cache.node('n0')?.requested.milliCPU).toBe(0);
    failBind.clear();
    clock.now = 1000;
    s.queue.flush();
    await drain();
    expect(bound.get('default/a')).toBe('n0');
  });

  it('a binding that landed though its answer was an error (a store timeout after the commit) is not retried', async () => {
    const { s, clock, drain } = setup();
    s.onNodeAdd(node('n0', { cpu: '2' }));
    let binds = 0;
    // The informer delivers the bound pod before the error answers the binding.
    (s as unknown as { opts: { sink: SchedulerSink } }).opts.sink.bind = async (p, n) => {
      binds++;
      s.onPodUpdate(p, { ...p, spec: { ...p.spec, nodeName: n } });
      throw new Error('The create operation against pods could not be completed at this time, please try again.');
    };
    s.onPodAdd(pod('a', { cpu: '1' }));
    await drain();
    clock.now = 60_000;
    s.queue.flush();
    await drain();
    expect(binds).toBe(1);
    expect(s.queue.stats()).toMatchObject({ active: 0, backoff: 0, unschedulable: 0 });
    expect(s.cache.node('n0')?.requested.milliCPU).toBe(1000);
  });

  it('with no nodes, says so, and a node added brings the pod back', async () => {
    const { s, clock, bound, failures, drain } = setup();
    s.onPodAdd(pod('a'));
    await drain();
    expect(failures.get('default/a')?.message).toBe('no nodes available to schedule pods');
    s.onNodeAdd(node('n0'));
    clock.now = 1000;
    s.queue.flush();
    await drain();
    expect(bound.get('default/a')).toBe('n0');
  });
});
