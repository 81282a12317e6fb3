import { describe, expect, it } from 'vitest';
import { PodInfo } from '../../src/scheduler/pod-info.js';
import { defaultProfile } from '../../src/scheduler/profile.js';
import { isFailure, NoNodesAvailableError, ScheduleAlgorithm } from '../../src/scheduler/schedule-pod.js';
import type { Node, Pod } from '../../src/scheduler/api-types.js';
import { firstOfEquals, node, pod, snapshotOf } from './fixtures.js';

function messageFor(p: Pod, nodes: Node[], placed: [Pod, string][] = []): string {
  const alg = new ScheduleAlgorithm(defaultProfile(), firstOfEquals);
  const r = alg.schedule(new PodInfo(p), snapshotOf(nodes, placed));
  if (!isFailure(r)) throw new Error(`expected no fit, got ${r.nodeName}`);
  return r.error.message;
}

describe('FitError messages, as Kubernetes 1.32 prints them', () => {
  it('sorts "count reason" items as Go sort.Strings does and appends the preemption message', () => {
    const nodes = [node('a', { cpu: '1' }), node('b', { cpu: '1' }), node('c', { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] })];
    expect(messageFor(pod('p', { cpu: '2' }), nodes)).toBe(
      '0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.',
    );
  });

  it('says preemption is not helpful when every rejection is unresolvable', () => {
    const nodes = [node('a'), node('b'), node('c')];
    expect(messageFor(pod('p', { nodeSelector: { disk: 'ssd' } }), nodes)).toBe(
      "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    );
  });

  it('lists every insufficient resource of a node, pods first', () => {
    const nodes = [node('a', { cpu: '1', memory: '1Gi', pods: 1 })];
    const placed: [Pod, string][] = [[pod('x'), 'a']];
    expect(messageFor(pod('p', { cpu: '2', memory: '2Gi' }), nodes, placed)).toBe(
      '0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
  });

  it('names cordoned nodes, host port conflicts and a node name mismatch', () => {
    const nodes = [node('a', { unschedulable: true }), node('b'), node('c')];
    const placed: [Pod, string][] = [[pod('x', { hostPort: 8080 }), 'b']];
    expect(messageFor(pod('p', { hostPort: 8080, affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['a', 'b'] }] }] } } } }), nodes, placed)).toBe(
      "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
    );
  });

  it('a pod that will not preempt says so', () => {
    expect(messageFor(pod('p', { cpu: '8', preemptionPolicy: 'Never' }), [node('a')])).toBe(
      '0/1 nodes are available: 1 Insufficient cpu. not eligible due to preemptionPolicy=Never.',
    );
  });

  it('with no nodes at all, Kubernetes ErrNoNodesAvailable', () => {
    const alg = new ScheduleAlgorithm(defaultProfile(), firstOfEquals);
    expect(() => alg.schedule(new PodInfo(pod('p')), snapshotOf([]))).toThrow(NoNodesAvailableError);
    expect(() => alg.schedule(new PodInfo(pod('p')), snapshotOf([]))).toThrow('no nodes available to schedule pods');
  });

  it('preemption nominates a node whose lower-priority pods make room, with the fewest victims', () => {
    const nodes = [node('a', { cpu: '2' }), node('b', { cpu: '2' })];
    const placed: [Pod, string][] = [
      [pod('a1', { cpu: '1', priority: 10 }), 'a'],
      [pod('a2', { cpu: '1', priority: 10 }), 'a'],
      [pod('b1', { cpu: '1', priority: 5 }), 'b'],
      [pod('b2', { cpu: '1', priority: 1000 }), 'b'],
    ];
    const alg = new ScheduleAlgorithm(defaultProfile(), firstOfEquals);
    const r = alg.schedule(new PodInfo(pod('p', { cpu: '1', priority: 100 })), snapshotOf(nodes, placed));
    if (!isFailure(r)) throw new Error('expected no fit');
    expect(r.preemption?.nominatedNodeName).toBe('b');
    expect(r.preemption?.victims?.map((v) => v.pod.metadata.name)).toEqual(['b1']);
    expect(r.error.message).toBe('0/2 nodes are available: 2 Insufficient cpu.');
  });
});
