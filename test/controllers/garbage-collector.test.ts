// The garbage collector against a real API server: Background, Foreground and Orphan deletion of
// Deployment → ReplicaSet → Pod chains, and dependents whose owner never existed (a dangling uid).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound } from '../../src/client/api-status-error.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import type { ResourceClient } from '../../src/client/resource-client.js';
import { CONFIGMAPS, DEPLOYMENTS, PODS, REPLICASETS } from '../../src/client/resource-types.js';
import { garbageCollectorFactory } from '../../src/controllers/garbage-collector/garbage-collector.js';
import { waitFor } from '../../src/harness/wait.js';
import { startControllerHarness, type ControllerHarness } from './controller-harness.js';
import { makeChain, ownerRef } from './gc-fixtures.js';

async function gone(c: ResourceClient, o: KubeObject): Promise<boolean> {
  try {
    const now = await c.get(o.metadata?.namespace ?? '', o.metadata?.name ?? '');
    return now.metadata?.uid !== o.metadata?.uid;
  } catch (e) {
    if (isNotFound(e)) return true;
    throw e;
  }
}

describe('garbage collector', () => {
  let h: ControllerHarness;
  let c: { deployments: ResourceClient; replicasets: ResourceClient; pods: ResourceClient; configmaps: ResourceClient };
  beforeAll(async () => {
    h = await startControllerHarness();
    c = { deployments: h.client(DEPLOYMENTS), replicasets: h.client(REPLICASETS), pods: h.client(PODS), configmaps: h.client(CONFIGMAPS) };
    h.start(garbageCollectorFactory);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('Background: the owner goes at once, then its ReplicaSet and pods', async () => {
    const chain = await makeChain(c, 'default', 'bg');
    await c.deployments.delete('default', 'bg', { propagationPolicy: 'Background' });
    expect(await gone(c.deployments, chain.deployment)).toBe(true);
    await waitFor('the chain collected', async () => (await gone(c.replicasets, chain.replicaSet)) && (await Promise.all(chain.pods.map((p) => gone(c.pods, p)))).every(Boolean));
  });

  it('Foreground: dependents go first, the owner stays with foregroundDeletion until they are gone', async () => {
    const chain = await makeChain(c, 'default', 'fg');
    // A finalizer of the test's own keeps one pod, so the owners are seen waiting for it.
    await c.pods.patch('default', 'fg-pod-0', 'merge', { metadata: { finalizers: ['test/hold'] } });
    await c.deployments.delete('default', 'fg', { propagationPolicy: 'Foreground' });
    const dep = await c.deployments.get('default', 'fg');
    expect(dep.metadata?.deletionTimestamp).toBeTruthy();
    expect(dep.metadata?.finalizers).toContain('foregroundDeletion');
    await waitFor('the ReplicaSet deleted in the foreground and the free pod gone', async () => {
      const rs = await c.replicasets.get('default', 'fg-rs');
      return rs.metadata?.finalizers?.includes('foregroundDeletion') && (await gone(c.pods, chain.pods[1]!));
    });
    const held = await c.pods.get('default', 'fg-pod-0');
    expect(held.metadata?.deletionTimestamp).toBeTruthy();
    expect(await gone(c.deployments, chain.deployment)).toBe(false);
    await c.pods.patch('default', 'fg-pod-0', 'merge', { metadata: { finalizers: [] } });
    await waitFor('the owners finalized after their dependents', async () => (await gone(c.replicasets, chain.replicaSet)) && (await gone(c.deployments, chain.deployment)));
  });

  it('Orphan: dependents lose the reference and stay; the owner goes', async () => {
    const chain = await makeChain(c, 'default', 'or');
    await c.deployments.delete('default', 'or', { propagationPolicy: 'Orphan' });
    await waitFor('the Deployment gone', () => gone(c.deployments, chain.deployment));
    const rs = await c.replicasets.get('default', 'or-rs');
    expect(rs.metadata?.ownerReferences ?? []).toEqual([]);
    expect(rs.metadata?.deletionTimestamp).toBeUndefined();
    for (const p of chain.pods) expect((await c.pods.get('default', p.metadata!.name!)).metadata?.ownerReferences?.[0]?.uid).toBe(rs.metadata?.uid);
  });

  it('a dangling owner uid gets the dependent deleted; a live second owner only loses the dangling reference', async () => {
    const ghost = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ghost', uid: '00000000-0000-0000-0000-00000000dead' } };
    const keeper = await c.configmaps.create({ metadata: { name: 'keeper', namespace: 'default' } });
    const orphan = await c.configmaps.create({ metadata: { name: 'dangling', namespace: 'default', ownerReferences: [ownerRef(ghost)] } });
    const shared = await c.configmaps.create({ metadata: { name: 'shared', namespace: 'default', ownerReferences: [ownerRef(ghost), ownerRef(keeper, false, false)] } });
    await waitFor('the dangling dependent deleted', () => gone(c.configmaps, orphan));
    await waitFor('the dangling reference dropped', async () => {
      const now = await c.configmaps.get('default', 'shared');
      return now.metadata?.ownerReferences?.length === 1 && now.metadata.ownerReferences[0]!.uid === keeper.metadata?.uid;
    });
    expect(await gone(c.configmaps, shared)).toBe(false);
  });
});
