// The node lifecycle controller's, the garbage collector's and the namespace controller's records land in
// the `reconcile` subresource of a real API server (etcd 3.4), and `setpoint why node/…` and
// `why namespace/…` (the built CLI as a process) print them. Needs `npm run build` first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiStatusError } from '../../src/client/api-status-error.js';
import { CONFIGMAPS, LEASES, NAMESPACES, NODES } from '../../src/client/resource-types.js';
import { garbageCollectorFactory } from '../../src/controllers/garbage-collector/garbage-collector.js';
import { DEFAULT_LIFECYCLE_OPTIONS } from '../../src/controllers/lifecycle-flags.js';
import { namespaceControllerFactory } from '../../src/controllers/namespace/namespace-controller.js';
import { nodeLifecycleFactory } from '../../src/controllers/node-lifecycle/node-lifecycle-controller.js';
import { rfc3339Seconds } from '../../src/controllers/status-conditions.js';
import { waitFor } from '../../src/harness/wait.js';
import { cliRunner, type CliRunner } from '../cli/helpers/cli-runner.js';
import { startControllerHarness, type ControllerHarness } from './controller-harness.js';
import { ownerRef } from './gc-fixtures.js';

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const GRACE_MS = 1500;
const HOLD = 'example.com/hold';

describe('loop records of the node lifecycle, garbage collector and namespace controllers', () => {
  let h: ControllerHarness;
  let cli: CliRunner;
  beforeAll(async () => {
    h = await startControllerHarness();
    cli = cliRunner(h.server);
    // One NoExecute token for the whole test: the second silent node waits on the eviction rate.
    h.start(
      nodeLifecycleFactory({ ...DEFAULT_LIFECYCLE_OPTIONS, nodeMonitorGracePeriodMs: GRACE_MS, nodeStartupGracePeriodMs: GRACE_MS, nodeEvictionRate: 0.001 }),
      garbageCollectorFactory,
      namespaceControllerFactory,
    );
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** The records on the object at `path`, [] while there are none. */
  const records = async (path: string): Promise<Rec[]> => {
    try {
      return (await h.rest.request<Rec>({ path: `${path}/reconcile` })).items as Rec[];
    } catch (e) {
      if (isApiStatusError(e, 'NotFound')) return [];
      throw e;
    }
  };
  const recordOf = async (path: string, controller: string, ok: (r: Rec) => boolean): Promise<Rec> =>
    waitFor(`${controller}'s record on ${path}`, async () => (await records(path)).find((r) => r.controller === controller && ok(r)), { timeoutMs: 30_000 });
  const dropHold = async (ns: string, name: string): Promise<void> => {
    await h.client(CONFIGMAPS).patch(ns, name, 'merge', { metadata: { finalizers: null } });
  };
  const gone = async (ns: string, name: string, t = CONFIGMAPS): Promise<void> => {
    await waitFor(`${name} gone`, async () => {
      try {
        await h.client(t).get(ns, name);
        return false;
      } catch (e) {
        if (isApiStatusError(e, 'NotFound')) return true;
        throw e;
      }
    }, { timeoutMs: 30_000 });
  };

  async function postReady(name: string): Promise<void> {
    const node = await h.client(NODES).get('', name);
    await h.client(NODES).patchStatus('', name, 'merge', {
      metadata: { resourceVersion: node.metadata?.resourceVersion },
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: rfc3339Seconds(new Date()) }] },
    });
  }

  it('node lifecycle: a silent node is tainted (or waits on the eviction rate), as its record and why say', async () => {
    for (const name of ['quiet-1', 'quiet-2']) {
      await h.client(NODES).create({ metadata: { name } });
      await postReady(name);
      await h.client(LEASES).create({ metadata: { name, namespace: 'kube-node-lease' }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new Date().toISOString() } });
    }
    const names = ['quiet-1', 'quiet-2'];
    const recs: Rec[] = [];
    const unreachable = (r: Rec): boolean => r.gap.actual.ready === 'Unknown' && (r.gap.actual.taints as string[]).includes('node.kubernetes.io/unreachable:NoSchedule');
    for (const name of names) recs.push(await recordOf(`/api/v1/nodes/${name}`, 'node-lifecycle-controller', unreachable));
    for (const r of recs) {
      expect(r.outcome).toBe('waiting');
      expect(r.gap.desired).toEqual({ ready: 'True', silentForSeconds: '<2' });
      expect(r.gap.actual.leaseAgeSeconds).toBeGreaterThanOrEqual(1);
      // The reconcile that tainted it, or one after it that found nothing more to do.
      expect(r.action).toMatch(/^(mark Ready=Unknown, taint node\.kubernetes\.io\/unreachable:NoSchedule.*|none)$/);
    }
    const heldAt = recs.findIndex((r) => String(r.message).startsWith('rate-limited eviction: the NoExecute taint is held back by --node-eviction-rate'));
    expect(heldAt).toBeGreaterThanOrEqual(0);
    const held = recs[heldAt]!;
    const tainted = recs[1 - heldAt]!;
    expect(held.gap.actual.taints).not.toContain('node.kubernetes.io/unreachable:NoExecute');
    expect(tainted.gap.actual.taints).toContain('node.kubernetes.io/unreachable:NoExecute');
    expect(tainted.message).toBe('waiting for the node to report Ready: Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.)');

    const out = await cli.ok('why', `node/${names[heldAt]!}`);
    expect(out).toMatch(/node-lifecycle-controller: .*, waiting \(ready Unknown\/True, .*\): rate-limited eviction/);

    // Heard from again: the taints come off, and the record says so.
    await postReady(names[1 - heldAt]!);
    const back = await recordOf(`/api/v1/nodes/${names[1 - heldAt]!}`, 'node-lifecycle-controller', (r) => r.outcome === 'ok');
    expect(back.action).toBe('untaint node.kubernetes.io/unreachable:NoSchedule, node.kubernetes.io/unreachable:NoExecute');
    expect(back.gap.actual).toMatchObject({ ready: 'True', taints: [] });
  });

  it('garbage collector: an owner deleted in the foreground records the dependent that blocks it', async () => {
    const owner = await h.client(CONFIGMAPS).create({ metadata: { name: 'fg-owner', namespace: 'default' } });
    await h.client(CONFIGMAPS).create({ metadata: { name: 'fg-dep', namespace: 'default', finalizers: [HOLD], ownerReferences: [ownerRef({ ...owner, apiVersion: 'v1', kind: 'ConfigMap' })] } });
    await h.client(CONFIGMAPS).delete('default', 'fg-owner', { propagationPolicy: 'Foreground' });
    const r = await recordOf('/api/v1/namespaces/default/configmaps/fg-owner', 'garbage-collector', (x) => String(x.message).includes('(being deleted)'));
    expect(r).toMatchObject({
      outcome: 'waiting',
      action: 'wait for 1 dependents with blockOwnerDeletion',
      message: 'foreground deletion waits for dependents with blockOwnerDeletion: configmaps/default/fg-dep (being deleted)',
      gap: { desired: { blockingDependents: 0 }, actual: { blockingDependents: 1, beingDeleted: 1, otherDependents: 0 } },
      details: { blocking: [{ resource: 'configmaps', namespace: 'default', name: 'fg-dep', beingDeleted: true }] },
    });
    const out = await cli.ok('why', 'configmap/fg-owner', '-n', 'default');
    expect(out).toMatch(/ConfigMap default\/fg-owner is not converging \(being deleted\)/);
    expect(out).toContain('held by finalizers foregroundDeletion');
    expect(out).toContain('garbage-collector: wait for 1 dependents with blockOwnerDeletion, waiting');
    await dropHold('default', 'fg-dep');
    await gone('default', 'fg-owner');
  });

  it('namespace controller: a Terminating namespace records what content remains, and why says it', async () => {
    await h.client(NAMESPACES).create({ metadata: { name: 'doomed' } });
    await h.client(CONFIGMAPS).create({ metadata: { name: 'kept', namespace: 'doomed', finalizers: [HOLD] } });
    await h.client(NAMESPACES).delete('', 'doomed');
    const r = await recordOf('/api/v1/namespaces/doomed', 'namespace-controller', (x) => (x.gap.actual.finalizers ?? {})[HOLD] === 1);
    expect(r).toMatchObject({
      outcome: 'waiting',
      action: 'delete content (1 objects in 1 resources remain)',
      gap: { desired: { remaining: 0 }, actual: { remaining: 1, resources: { 'configmaps.': 1 }, finalizers: { [HOLD]: 1 } } },
    });
    expect(r.message).toContain('SomeFinalizersRemain: Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
    const out = await cli.ok('why', 'namespace/doomed');
    expect(out).toMatch(/Terminating since/);
    expect(out).toContain('namespace-controller: delete content (1 objects in 1 resources remain), waiting (remaining 1/0');
    await dropHold('doomed', 'kept');
    await gone('', 'doomed', NAMESPACES);
  });
});
