import { describe, expect, it } from 'vitest';
import { buildDiagnosis, feasibility } from '../../src/scheduler/diagnosis.js';
import { PodInfo } from '../../src/scheduler/pod-info.js';
import { defaultProfile } from '../../src/scheduler/profile.js';
import { isFailure, ScheduleAlgorithm } from '../../src/scheduler/schedule-pod.js';
import { firstOfEquals, node, pod, snapshotOf } from './fixtures.js';

describe('diagnosis for why', () => {
  it('names the plugin and the numbers per node, and stays JSON', () => {
    const snap = snapshotOf([node('a', { cpu: '1' }), node('b', { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] })], [[pod('x', { cpu: '500m' }), 'a']]);
    const r = new ScheduleAlgorithm(defaultProfile(), firstOfEquals).schedule(new PodInfo(pod('p', { cpu: '2' })), snap);
    if (!isFailure(r)) throw new Error('expected no fit');
    const d = JSON.parse(JSON.stringify(buildDiagnosis(r.error)));
    expect(d).toEqual({
      pod: 'default/p',
      message: r.error.message,
      numAllNodes: 2,
      reasons: { 'Insufficient cpu': 1, 'node(s) had untolerated taint {k: v}': 1 },
      plugins: { NodeResourcesFit: 1, TaintToleration: 1 },
      nodes: [
        { node: 'a', plugin: 'NodeResourcesFit', code: 'Unschedulable', reasons: ['Insufficient cpu'], details: { insufficient: [{ resource: 'cpu', reason: 'Insufficient cpu', requested: 2000, used: 500, allocatable: 1000 }] } },
        { node: 'b', plugin: 'TaintToleration', code: 'UnschedulableAndUnresolvable', reasons: ['node(s) had untolerated taint {k: v}'], details: { taint: { key: 'k', value: 'v', effect: 'NoSchedule' } } },
      ],
      nodesOmitted: 0,
    });
  });

  it('counts how many of a controller\'s pending pods could fit at all', () => {
    // 10 replicas x 2 cpu; free: 3 + 4 cpu on eligible nodes (1 + 2 copies); one node tainted away.
    const snap = snapshotOf(
      [node('a', { cpu: '4' }), node('b', { cpu: '4' }), node('c', { cpu: '64', taints: [{ key: 'gpu', value: 'only', effect: 'NoSchedule' }] })],
      [[pod('x', { cpu: '1' }), 'a']],
    );
    const f = feasibility(defaultProfile(), new PodInfo(pod('tmpl', { cpu: '2', memory: '1Gi' })), snap, 10);
    expect(f).toEqual({
      pending: 10,
      couldFit: 3,
      capacity: 3,
      eligibleNodes: 2,
      excludedBy: { TaintToleration: 1 },
      limitedBy: { cpu: 2 },
      perPod: { cpu: 2000, memory: 1024 ** 3 },
    });
  });
});
