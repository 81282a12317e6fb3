// `setpoint agent --simulate N` as a process on `setpoint apiserver` on a real etcd (dist/: build first):
// N Ready nodes with Leases; pods bound to them are Running and Ready with a podIP at once; deleting one
// is finished by the simulated node; a pod the node controller marked not ready (its node judged silent)
// and the node's Ready=Unknown are put back by the live simulated node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound } from '../../src/client/api-status-error.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { LEASES, NODES, PODS } from '../../src/client/resource-types.js';
import { waitFor } from '../../src/harness/wait.js';
import { AgentCluster, kill, startMain, type Proc } from './helpers/agent-cluster.js';

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };
const N = 20;
const PODS_N = 60;

describe('setpoint agent --simulate', () => {
  let c: AgentCluster;
  let sim: Proc | undefined;

  beforeAll(async () => {
    c = await AgentCluster.start();
    sim = startMain(['agent', '--kubeconfig', c.adminKubeconfig, '--simulate', String(N), '--node-name', 'kwok', '--node-labels', 'pool=sim']);
  }, 120_000);
  afterAll(async () => {
    await kill(sim);
    await c?.stop();
  }, 60_000);

  it('registers N Ready nodes with Leases, runs bound pods at once and finishes their deletion', async () => {
    const nodes = new ResourceClient<Obj>(c.admin, NODES);
    const leases = new ResourceClient<Obj>(c.admin, LEASES);
    const pods = new ResourceClient<Obj>(c.admin, PODS);
    const ready = (n: Obj): boolean => ((n.status?.['conditions'] ?? []) as { type: string; status: string }[]).some((x) => x.type === 'Ready' && x.status === 'True');
    await waitFor(`${N} Ready nodes`, async () => (await nodes.list('', { labelSelector: 'pool=sim' })).items.filter(ready).length === N, {
      timeoutMs: 60_000,
      detail: () => sim?.output().slice(-2000) ?? '',
    });
    const one = await nodes.get('', 'kwok-7');
    expect(one.metadata?.labels).toMatchObject({ 'kubernetes.io/hostname': 'kwok-7', type: 'simulated', pool: 'sim' });
    expect(one.status?.['capacity']).toMatchObject({ cpu: '32', pods: '110' });
    await waitFor(`${N} leases`, async () => (await leases.list('kube-node-lease')).items.filter((l) => l.metadata?.name?.startsWith('kwok-')).length === N);

    for (let i = 0; i < PODS_N; i++) {
      await pods.create({
        metadata: { name: `p-${i}`, namespace: 'default' },
        spec: { nodeName: `kwok-${i % N}`, containers: [{ name: 'c', image: 'nginx' }], initContainers: i === 0 ? [{ name: 'init', image: 'busybox' }] : undefined },
      });
    }
    const running = await waitFor(`${PODS_N} pods Running and Ready`, async () => {
      const items = (await pods.list('default')).items;
      const ok = items.filter((p) => p.status?.['phase'] === 'Running' && ((p.status['conditions'] ?? []) as { type: string; status: string }[]).some((x) => x.type === 'Ready' && x.status === 'True'));
      return ok.length === PODS_N ? ok : undefined;
    }, { timeoutMs: 60_000 });
    const ips = new Set(running.map((p) => String(p.status?.['podIP'])));
    expect(ips.size).toBe(PODS_N);
    const p0 = running.find((p) => p.metadata?.name === 'p-0');
    expect((p0?.status?.['initContainerStatuses'] as { state: unknown }[])[0]?.state).toMatchObject({ terminated: { exitCode: 0, reason: 'Completed' } });
    expect((p0?.status?.['containerStatuses'] as unknown[])[0]).toMatchObject({ name: 'c', ready: true, started: true, restartCount: 0 });

    await pods.delete('default', 'p-1');
    await waitFor('p-1 deleted by its simulated node', async () => pods.get('default', 'p-1').then(() => false, (e: unknown) => isNotFound(e)));
    expect(sim?.child.exitCode).toBeNull();
  });

  it('puts back Ready on a running pod and its node when the node controller marked them while it judged the node silent', async () => {
    const nodes = new ResourceClient<Obj>(c.admin, NODES);
    const pods = new ResourceClient<Obj>(c.admin, PODS);
    type Cond = { type: string; status: string };
    const cond = (o: Obj | undefined, type: string): string | undefined => ((o?.status?.['conditions'] ?? []) as Cond[]).find((x) => x.type === type)?.status;
    await pods.create({ metadata: { name: 'marked', namespace: 'default' }, spec: { nodeName: 'kwok-3', containers: [{ name: 'c', image: 'nginx' }] } });
    const running = await waitFor('the pod Ready', async () => {
      const p = await pods.get('default', 'marked');
      return cond(p, 'Ready') === 'True' ? p : undefined;
    });
    // What the node-lifecycle controller writes: the node Ready=Unknown, then its pods Ready=False.
    const node = await nodes.get('', 'kwok-3');
    const unknown = ((node.status?.['conditions'] ?? []) as Cond[]).map((x) => (x.type === 'Ready' ? { ...x, status: 'Unknown', reason: 'NodeStatusUnknown' } : x));
    await nodes.patchStatus('', 'kwok-3', 'merge', { status: { conditions: unknown } });
    const notReady = ((running.status?.['conditions'] ?? []) as Cond[]).map((x) => (x.type === 'Ready' ? { ...x, status: 'False' } : x));
    await pods.patchStatus('default', 'marked', 'merge', { metadata: { resourceVersion: running.metadata?.resourceVersion }, status: { conditions: notReady } });
    await waitFor('the pod and its node Ready again', async () => cond(await pods.get('default', 'marked'), 'Ready') === 'True' && cond(await nodes.get('', 'kwok-3'), 'Ready') === 'True', {
      timeoutMs: 60_000,
    });
  }, 90_000);
});
