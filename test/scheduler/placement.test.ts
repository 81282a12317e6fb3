// Table-driven placements over the cases Kubernetes documents: taints and tolerations, node affinity
// (required and preferred, nodeSelector), hostPort, resources, topology spread; plus the cache's
// assumed pods under a burst.
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/scheduler/api-types.js';
import { PodInfo } from '../../src/scheduler/pod-info.js';
import { defaultProfile } from '../../src/scheduler/profile.js';
import { SchedulerCache } from '../../src/scheduler/scheduler-cache.js';
import { isFailure, ScheduleAlgorithm } from '../../src/scheduler/schedule-pod.js';
import { numFeasibleNodesToFind } from '../../src/scheduler/num-feasible-nodes.js';
import { firstOfEquals, node, pod, snapshotOf } from './fixtures.js';

function place(p: Pod, nodes: Node[], placed: [Pod, string][] = []): string {
  const r = new ScheduleAlgorithm(defaultProfile(), firstOfEquals).schedule(new PodInfo(p), snapshotOf(nodes, placed));
  return isFailure(r) ? `none: ${r.error.message}` : r.nodeName;
}

const taint = (key: string, value: string, effect: string) => ({ key, value, effect });
const zone = (z: string) => ({ 'topology.kubernetes.io/zone': z });

interface Case {
  name: string;
  pod: Pod;
  nodes: Node[];
  placed?: [Pod, string][];
  want: string | string[];
}

const cases: Case[] = [
  // kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
  { name: 'NoSchedule taint keeps an intolerant pod away', pod: pod('p'), nodes: [node('n1', { taints: [taint('key1', 'value1', 'NoSchedule')] }), node('n2')], want: 'n2' },
  { name: 'Equal toleration matches key, value and effect', pod: pod('p', { tolerations: [{ key: 'key1', operator: 'Equal', value: 'value1', effect: 'NoSchedule' }] }), nodes: [node('n1', { taints: [taint('key1', 'value1', 'NoSchedule')] })], want: 'n1' },
  { name: 'Exists toleration matches any value', pod: pod('p', { tolerations: [{ key: 'key1', operator: 'Exists', effect: 'NoSchedule' }] }), nodes: [node('n1', { taints: [taint('key1', 'other', 'NoSchedule')] })], want: 'n1' },
  { name: 'empty key with Exists tolerates everything', pod: pod('p', { tolerations: [{ operator: 'Exists' }] }), nodes: [node('n1', { taints: [taint('a', 'b', 'NoExecute'), taint('c', 'd', 'NoSchedule')] })], want: 'n1' },
  { name: 'a toleration for another effect does not help', pod: pod('p', { tolerations: [{ key: 'key1', operator: 'Exists', effect: 'NoExecute' }] }), nodes: [node('n1', { taints: [taint('key1', 'v', 'NoSchedule')] })], want: 'none: 0/1 nodes are available: 1 node(s) had untolerated taint {key1: v}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.' },
  { name: 'all taints must be tolerated (docs: key1 twice, key2)', pod: pod('p', { tolerations: [{ key: 'key1', operator: 'Equal', value: 'value1', effect: 'NoSchedule' }, { key: 'key1', operator: 'Equal', value: 'value1', effect: 'NoExecute' }] }), nodes: [node('n1', { taints: [taint('key1', 'value1', 'NoSchedule'), taint('key1', 'value1', 'NoExecute'), taint('key2', 'value2', 'NoSchedule')] })], want: 'none: 0/1 nodes are available: 1 node(s) had untolerated taint {key2: value2}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.' },
  { name: 'PreferNoSchedule only steers', pod: pod('p'), nodes: [node('n1', { taints: [taint('k', 'v', 'PreferNoSchedule')] }), node('n2')], want: 'n2' },
  { name: 'PreferNoSchedule alone still schedules', pod: pod('p'), nodes: [node('n1', { taints: [taint('k', 'v', 'PreferNoSchedule')] })], want: 'n1' },
  { name: 'a cordoned node takes a pod tolerating node.kubernetes.io/unschedulable', pod: pod('p', { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }), nodes: [node('n1', { unschedulable: true })], want: 'n1' },
  // kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
  { name: 'nodeSelector', pod: pod('p', { nodeSelector: { disktype: 'ssd' } }), nodes: [node('n1'), node('n2', { labels: { disktype: 'ssd' } })], want: 'n2' },
  {
    name: 'required affinity In over zones, preferred picks the weighted label',
    pod: pod('p', {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['antarctica-east1', 'antarctica-west1'] }] }] },
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'another-node-label-key', operator: 'In', values: ['another-node-label-value'] }] } }],
        },
      },
    }),
    nodes: [node('n1', { labels: zone('antarctica-east1') }), node('n2', { labels: { ...zone('antarctica-west1'), 'another-node-label-key': 'another-node-label-value' } }), node('n3', { labels: { ...zone('elsewhere'), 'another-node-label-key': 'another-node-label-value' } })],
    want: 'n2',
  },
  { name: 'preferred weights add up (docs: weight 1 vs 50)', pod: pod('p', { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'label-1', operator: 'In', values: ['key-1'] }] } }, { weight: 50, preference: { matchExpressions: [{ key: 'label-2', operator: 'In', values: ['key-2'] }] } }] } } }), nodes: [node('n1', { labels: { 'label-1': 'key-1' } }), node('n2', { labels: { 'label-2': 'key-2' } })], want: 'n2' },
  { name: 'terms are ORed, expressions ANDed', pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'DoesNotExist' }] }, { matchExpressions: [{ key: 'c', operator: 'Gt', values: ['5'] }] }] } } } }), nodes: [node('n1', { labels: { a: '1', b: '1' } }), node('n2', { labels: { c: '4' } }), node('n3', { labels: { c: '6' } })], want: 'n3' },
  { name: 'NotIn matches a node without the label', pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'NotIn', values: ['true'] }] }] } } } }), nodes: [node('n1', { labels: { gpu: 'true' } }), node('n2')], want: 'n2' },
  { name: 'matchFields metadata.name', pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }] } } } }), nodes: [node('n1'), node('n2')], want: 'n2' },
  // hostPort
  { name: 'a taken host port sends the pod elsewhere', pod: pod('p', { hostPort: 80 }), nodes: [node('n1'), node('n2')], placed: [[pod('x', { hostPort: 80 }), 'n1']], want: 'n2' },
  // resources
  { name: 'requests must fit what is left', pod: pod('p', { cpu: '3' }), nodes: [node('n1'), node('n2')], placed: [[pod('x', { cpu: '2' }), 'n1']], want: 'n2' },
  { name: 'init containers count by their peak', pod: { ...pod('p', { cpu: '1' }), spec: { ...pod('p', { cpu: '1' }).spec, initContainers: [{ name: 'i', resources: { requests: { cpu: '3500m' } } }] } }, nodes: [node('n1'), node('n2')], placed: [[pod('x', { cpu: '1' }), 'n1']], want: 'n2' },
  { name: 'overhead counts', pod: pod('p', { cpu: '3', overhead: { cpu: '1500m' } }), nodes: [node('n1')], want: 'none: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.' },
  { name: 'LeastAllocated prefers the emptier node', pod: pod('p', { cpu: '1', memory: '1Gi' }), nodes: [node('n1'), node('n2')], placed: [[pod('x', { cpu: '2', memory: '8Gi' }), 'n1']], want: 'n2' },
  // kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/ (example: 4 nodes, 2 zones, 3 pods)
  {
    name: 'maxSkew 1 over zones: zoneA has 2, zoneB 1, the new pod goes to zoneB',
    pod: pod('mypod', { labels: { foo: 'bar' }, topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { foo: 'bar' } } }] }),
    nodes: [node('node1', { labels: zone('zoneA') }), node('node2', { labels: zone('zoneA') }), node('node3', { labels: zone('zoneB') }), node('node4', { labels: zone('zoneB') })],
    placed: [[pod('a', { labels: { foo: 'bar' } }), 'node1'], [pod('b', { labels: { foo: 'bar' } }), 'node2'], [pod('c', { labels: { foo: 'bar' } }), 'node3']],
    want: ['node3', 'node4'],
  },
  {
    name: 'two constraints (zone and node) leave only node4',
    pod: pod('mypod', { labels: { foo: 'bar' }, topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { foo: 'bar' } } },
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { foo: 'bar' } } },
    ] }),
    nodes: [node('node1', { labels: zone('zoneA') }), node('node2', { labels: zone('zoneA') }), node('node3', { labels: zone('zoneB') }), node('node4', { labels: zone('zoneB') })],
    placed: [[pod('a', { labels: { foo: 'bar' } }), 'node1'], [pod('b', { labels: { foo: 'bar' } }), 'node2'], [pod('c', { labels: { foo: 'bar' } }), 'node3']],
    want: 'node4',
  },
  {
    name: 'a node without the topology key is out of DoNotSchedule',
    pod: pod('p', { labels: { foo: 'bar' }, topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { foo: 'bar' } } }] }),
    nodes: [node('n1')],
    want: "none: 0/1 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label). preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
  },
  {
    name: 'ScheduleAnyway steers to the emptier zone',
    pod: pod('p', { labels: { foo: 'bar' }, topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { foo: 'bar' } } }] }),
    nodes: [node('n1', { labels: zone('a') }), node('n2', { labels: zone('b') })],
    placed: [[pod('x', { labels: { foo: 'bar' } }), 'n1'], [pod('y', { labels: { foo: 'bar' } }), 'n1']],
    want: 'n2',
  },
];

describe('placement, table-driven over the Kubernetes docs', () => {
  for (const c of cases) {
    it(c.name, () => {
      const got = place(c.pod, c.nodes, c.placed);
      if (Array.isArray(c.want)) expect(c.want).toContain(got);
      else expect(got).toBe(c.want);
    });
  }
});

describe('percentageOfNodesToScore', () => {
  it.each([
    [50, 50], [100, 100], [1000, 420], [5000, 500], [6000, 300], [10000, 500], [15000, 750],
  ])('%i nodes → %i to find (adaptive)', (n, want) => {
    expect(numFeasibleNodesToFind(0, n)).toBe(want);
  });

  it('a set percentage, never below 100 nodes', () => {
    expect(numFeasibleNodesToFind(30, 1000)).toBe(300);
    expect(numFeasibleNodesToFind(1, 1000)).toBe(100);
  });

  it('starts each cycle where the last one stopped', () => {
    const nodes = Array.from({ length: 1000 }, (_, i) => node(`n${i}`));
    const alg = new ScheduleAlgorithm(defaultProfile(), firstOfEquals);
    const snap = snapshotOf(nodes);
    const r1 = alg.schedule(new PodInfo(pod('a')), snap);
    expect(isFailure(r1) ? 0 : r1.evaluatedNodes).toBe(420);
    expect(alg.nextStartNodeIndex).toBe(420);
    alg.schedule(new PodInfo(pod('b')), snap);
    expect(alg.nextStartNodeIndex).toBe(840);
    alg.schedule(new PodInfo(pod('c')), snap);
    expect(alg.nextStartNodeIndex).toBe(260);
  });
});

describe('assumed pods', () => {
  it('a burst never overcommits a node: assumed pods count before the informer confirms them', () => {
    let now = 0;
    const cache = new SchedulerCache({ now: () => now, assumedPodTtlMs: 1000 });
    for (let i = 0; i < 3; i++) cache.addNode(node(`n${i}`, { cpu: '2' }));
    const alg = new ScheduleAlgorithm(defaultProfile(), firstOfEquals);
    let snap = cache.updateSnapshot();
    const placed: string[] = [];
    let failures = 0;
    for (let i = 0; i < 10; i++) {
      snap = cache.updateSnapshot(snap);
      const r = alg.schedule(new PodInfo(pod(`p${i}`, { cpu: '1' })), snap);
      if (isFailure(r)) {
        failures++;
        continue;
      }
      cache.assumePod(new PodInfo(pod(`p${i}`, { cpu: '1' })).withNodeName(r.nodeName));
      cache.finishBinding(`default/p${i}`);
      placed.push(r.nodeName);
    }
    expect(placed).toHaveLength(6);
    expect(failures).toBe(4);
    for (let i = 0; i < 3; i++) expect(placed.filter((n) => n === `n${i}`)).toHaveLength(2);
    // Confirmation keeps the accounting; expiry drops only what was never observed.
    cache.addPod({ ...pod('p0', { cpu: '1' }), spec: { ...pod('p0', { cpu: '1' }).spec, nodeName: placed[0] as string } });
    expect(cache.isAssumed('default/p0')).toBe(false);
    now = 5000;
    expect(cache.cleanupExpiredAssumedPods().sort()).toEqual(['default/p1', 'default/p2', 'default/p3', 'default/p4', 'default/p5']);
    expect(cache.podCount).toBe(1);
  });

  it('a failed binding gives the room back', () => {
    const cache = new SchedulerCache({ now: () => 0 });
    cache.addNode(node('n1', { cpu: '1' }));
    cache.assumePod(new PodInfo(pod('p', { cpu: '1' })).withNodeName('n1'));
    expect(cache.node('n1')?.requested.milliCPU).toBe(1000);
    cache.forgetPod('default/p');
    expect(cache.node('n1')?.requested.milliCPU).toBe(0);
    expect(() => cache.forgetPod('default/p')).toThrow("pod default/p wasn't assumed so cannot be forgotten");
  });

  it('lists nodes round-robin across zones', () => {
    const cache = new SchedulerCache({ now: () => 0 });
    for (const [n, z] of [['a1', 'a'], ['a2', 'a'], ['b1', 'b'], ['c1', 'c'], ['b2', 'b']] as const) cache.addNode(node(n, { labels: zone(z) }));
    expect(cache.updateSnapshot().list.map((n) => n.name)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2']);
  });
});
