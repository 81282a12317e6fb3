// Node lifecycle and taint-based eviction against a real API server (on etcd 3.4 and on Setpoint's store), with short grace periods: a node
// that stops renewing its Lease goes Ready=Unknown with the unreachable taints, its pods go Ready=False,
// pods with tolerationSeconds 0 are deleted at once, pods with a few seconds after them, pods that
// tolerate the taint forever stay; a heartbeat again removes the taints; --node-eviction-rate holds back
// the NoExecute taint of nodes beyond its tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/client/kube-object.js';
import { EVENTS, LEASES, NODES, PODS } from '../../src/client/resource-types.js';
import { DEFAULT_LIFECYCLE_OPTIONS } from '../../src/controllers/lifecycle-flags.js';
import { nodeLifecycleFactory } from '../../src/controllers/node-lifecycle/node-lifecycle-controller.js';
import type { NodeObject, PodObject } from '../../src/controllers/node-lifecycle/node-types.js';
import { taintEvictionFactory } from '../../src/controllers/node-lifecycle/taint-eviction-controller.js';
import { findCondition, rfc3339Seconds } from '../../src/controllers/status-conditions.js';
import { waitFor } from '../../src/harness/wait.js';
import { STORE_KINDS } from '../etcd-client/helpers/store-cluster.js';
import { startControllerHarness, type ControllerHarness } from './controller-harness.js';

const GRACE_MS = 1500;

// The full lifecycle on both stores; the eviction-rate case (pure controller logic) on etcd 3.4 only.
describe.each(STORE_KINDS)('node lifecycle on %s', (store) => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness({ store });
    h.start(nodeLifecycleFactory({ ...DEFAULT_LIFECYCLE_OPTIONS, nodeMonitorGracePeriodMs: GRACE_MS, nodeStartupGracePeriodMs: GRACE_MS, nodeEvictionRate: 1000 }), taintEvictionFactory);
  });
  afterAll(async () => {
    await h?.stop();
  });

  async function postReady(name: string): Promise<void> {
    const now = rfc3339Seconds(new Date());
    const node = await h.client<NodeObject>(NODES).get('', name);
    await h.client(NODES).patchStatus('', name, 'merge', {
      metadata: { resourceVersion: node.metadata?.resourceVersion },
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: now }] },
    });
  }

  async function pod(name: string, node: string, tolerations: unknown[] = []): Promise<PodObject> {
    const p = await h.client<PodObject>(PODS).create({ metadata: { name, namespace: 'default' }, spec: { nodeName: node, containers: [{ name: 'c', image: 'x' }], tolerations } } as PodObject);
    await h.client(PODS).patchStatus('default', name, 'merge', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } });
    return p;
  }

  const deleting = async (name: string): Promise<boolean> => Boolean((await h.client(PODS).get('default', name)).metadata?.deletionTimestamp);

  it('a silent node goes Unknown and tainted, its pods evicted as their tolerations say; a heartbeat clears the taints', async () => {
    await h.client(NODES).create({ metadata: { name: 'n1' } });
    await postReady('n1');
    await h.client(LEASES).create({ metadata: { name: 'n1', namespace: 'kube-node-lease' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: new Date().toISOString() } });
    // DefaultTolerationSeconds admission gives a pod without its own tolerations 300 s for both taints;
    // tolerationSeconds 0 is how a pod asks to go at once.
    const defaulted = await pod('defaulted', 'n1');
    expect(defaulted.spec?.tolerations).toContainEqual({ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
    await pod('intolerant', 'n1', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }]);
    await pod('patient', 'n1', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 }]);
    await pod('forever', 'n1', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }]);

    const node = await waitFor('Ready=Unknown', async () => {
      const n = await h.client<NodeObject>(NODES).get('', 'n1');
      return findCondition(n.status?.conditions, 'Ready')?.status === 'Unknown' && (n.spec?.taints ?? []).length >= 2 ? n : undefined;
    });
    expect(findCondition(node.status?.conditions, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
    expect(node.spec?.taints?.map((t) => `${t.key}:${t.effect}`)).toEqual(['node.kubernetes.io/unreachable:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute']);
    expect(node.spec?.taints?.[1]?.timeAdded).toBeTruthy();

    await waitFor('the intolerant pod deleted', () => deleting('intolerant'));
    await waitFor('the patient pod deleted after its tolerationSeconds', () => deleting('patient'), { timeoutMs: 60_000 });
    await waitFor('the pods marked not ready', async () => {
      const p = await h.client<PodObject>(PODS).get('default', 'forever');
      return findCondition(p.status?.conditions, 'Ready')?.status === 'False';
    });
    expect(await deleting('forever')).toBe(false);
    expect(await deleting('defaulted')).toBe(false);
    const events = await waitFor('the eviction events', async () => {
      const list = (await h.client(EVENTS).list('default')).items as Array<KubeObject & { reason?: string; message?: string }>;
      const mine = list.filter((e) => e.reason === 'TaintManagerEviction').map((e) => e.message ?? '');
      return mine.length >= 2 ? mine.sort() : undefined;
    });
    expect(events).toEqual(['Marking for deletion Pod default/intolerant', 'Marking for deletion Pod default/patient']);

    await postReady('n1');
    await waitFor('the taints removed on recovery', async () => ((await h.client<NodeObject>(NODES).get('', 'n1')).spec?.taints ?? []).length === 0);
  });

  it('a node that never posts status goes Unknown after the startup grace', async () => {
    await h.client(NODES).create({ metadata: { name: 'mute' } });
    const n = await waitFor('Ready=Unknown', async () => {
      const got = await h.client<NodeObject>(NODES).get('', 'mute');
      return findCondition(got.status?.conditions, 'Ready')?.status === 'Unknown' ? got : undefined;
    });
    expect(findCondition(n.status?.conditions, 'Ready')).toMatchObject({ reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.' });
  });
});

describe('node eviction rate', () => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness();
    // One token per 1,000 s, burst 1: the first silent node is tainted NoExecute, the second must wait.
    h.start(nodeLifecycleFactory({ ...DEFAULT_LIFECYCLE_OPTIONS, nodeMonitorGracePeriodMs: GRACE_MS, nodeStartupGracePeriodMs: GRACE_MS, nodeEvictionRate: 0.001 }));
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('taints only as many nodes NoExecute as the rate allows; the others get NoSchedule only', async () => {
    for (const name of ['r1', 'r2']) await h.client(NODES).create({ metadata: { name } });
    const taintsOf = async (name: string): Promise<string[]> => ((await h.client<NodeObject>(NODES).get('', name)).spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
    await waitFor('both nodes tainted NoSchedule', async () => (await taintsOf('r1')).length > 0 && (await taintsOf('r2')).length > 0);
    const both = [await taintsOf('r1'), await taintsOf('r2')].sort((a, b) => b.length - a.length);
    expect(both).toEqual([['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule'], ['node.kubernetes.io/unreachable:NoSchedule']]);
  });
});
