// `setpoint controller-manager --controllers=replicaset,deployment` as a process against `setpoint apiserver`
// on a real etcd 3.4 and on Setpoint's store (the lifecycle controllers would collect pods on a node that has no Node object), with a
// simulated node playing the agent (bind, Running+Ready, final delete): a 4-replica Deployment gets its
// ReplicaSet and pods; scaling up and down converges; a rolling update never breaks maxSurge (on the
// ReplicaSets' sizes, which is what Kubernetes bounds) or maxUnavailable (on the ready pods) at any moment
// a watcher observes; real kubectl's `rollout status` returns, `rollout undo` brings back the first
// template as revision 3, and `rollout history` lists the revisions. Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Informer } from '../../src/client/informer.js';
import { controllerRefOf } from '../../src/controllers/controller-ref-manager.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { DEPLOYMENTS, EVENTS, PODS, REPLICASETS } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import type { Deployment, Pod, ReplicaSet } from '../../src/controllers/apps-types.js';
import { isPodReady } from '../../src/controllers/pod-readiness.js';
import { startApiServerProcess, type ApiServerProcess } from '../../src/harness/apiserver-process.js';
import { controllerManagerKind } from '../../src/harness/kinds/controller-manager.js';
import type { ManagedProcess } from '../../src/harness/managed-process.js';
import { startProcess } from '../../src/harness/process-kind.js';
import { waitFor } from '../../src/harness/wait.js';
import { runKubectl } from '../apiserver/helpers/kubectl-runner.js';
import { STORE_KINDS, StoreTestCluster } from '../etcd-client/helpers/store-cluster.js';
import { SimulatedNode } from './helpers/simulated-node.js';

const NS = 'default';

describe.each(STORE_KINDS)('setpoint controller-manager with Deployments on %s', (store) => {
  let dir: string;
  let etcd: StoreTestCluster;
  let api: ApiServerProcess;
  let manager: ManagedProcess;
  let rest: RestClient;
  let node: SimulatedNode;
  let homes = 0;
  const deployments = (): ResourceClient<Deployment> => new ResourceClient<Deployment>(rest, DEPLOYMENTS);
  const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(api.kubeconfig, join(dir, `home-${homes++}`), args);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'controller-manager-'));
    etcd = await StoreTestCluster.start(store);
    api = await startApiServerProcess({ dir, etcdServers: etcd.endpoints() });
    rest = new RestClient(api.clientConfig);
    let synced = false;
    ({ process: manager } = await startProcess(
      controllerManagerKind,
      // Not leader-elected: this test is about the controllers, and a lease renewal that times out on
      // a loaded machine would end the only manager (as a lost lease ends Kubernetes' too).
      { kubeconfig: api.kubeconfig, flags: ['--controllers=replicaset,deployment', '--leader-elect=false'], synced: () => synced },
      { name: 'controller-manager', dir, output: { capture: true, onLine: (l) => (synced ||= l.includes('caches synced')) } },
    ));
    node = new SimulatedNode(rest);
    await node.start();
  }, 120_000);
  afterAll(async () => {
    await node?.stop();
    await manager?.kill('SIGTERM');
    rest?.close();
    await api?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const get = (): Promise<Deployment> => deployments().get(NS, 'web');
  const setsOf = async (d: Deployment): Promise<ReplicaSet[]> =>
    (await new ResourceClient<ReplicaSet>(rest, REPLICASETS).list(NS)).items.filter((rs) => controllerRefOf(rs)?.uid === d.metadata.uid);
  const livePods = async (): Promise<Pod[]> => (await new ResourceClient<Pod>(rest, PODS).list(NS, { labelSelector: 'app=web' })).items.filter((p) => !p.metadata.deletionTimestamp);

  /** Converged: the status says so for the current generation, and the live pods are that many, all ready. */
  async function converged(replicas: number, what: string): Promise<Deployment> {
    return waitFor(
      what,
      async () => {
        const d = await get();
        const s = d.status ?? {};
        const progressing = s.conditions?.find((c) => c.type === 'Progressing');
        const pods = await livePods();
        const ok =
          (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) &&
          s.replicas === replicas &&
          s.updatedReplicas === replicas &&
          s.availableReplicas === replicas &&
          progressing?.reason === 'NewReplicaSetAvailable' &&
          pods.length === replicas &&
          pods.every(isPodReady);
        return ok ? d : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, detail: () => manager.stderr.slice(-2000) },
    );
  }

  it('creates the ReplicaSet and its pods, scales up and down, and kubectl rollout status returns', async () => {
    await deployments().create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NS },
      spec: { replicas: 4, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } } },
    });
    let d = await converged(4, 'the first rollout');
    const [rs] = await setsOf(d);
    const hash = rs?.metadata.labels?.['pod-template-hash'] ?? '';
    expect(rs?.metadata.name).toBe(`web-${hash}`);
    expect(rs?.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('1');
    expect(d.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('1');
    for (const p of await livePods()) expect(p.metadata.labels?.['pod-template-hash']).toBe(hash);
    expect(d.status?.conditions?.find((c) => c.type === 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    const events = (await new ResourceClient(rest, EVENTS).list(NS)).items as Array<{ reason?: string; message?: string; involvedObject?: { name?: string } }>;
    expect(events.filter((e) => e.reason === 'SuccessfulCreate' && e.involvedObject?.name === rs?.metadata.name && /^Created pod: web-/.test(e.message ?? ''))).toHaveLength(4);
    expect(events.some((e) => e.reason === 'ScalingReplicaSet' && e.message === `Scaled up replica set web-${hash} from 0 to 4`)).toBe(true);

    const status = await kubectl('rollout', 'status', 'deployment/web', '--timeout=60s');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('deployment "web" successfully rolled out');

    await deployments().patchScale(NS, 'web', 7);
    await converged(7, 'scale up to 7');
    await deployments().patchScale(NS, 'web', 2);
    await converged(2, 'scale down to 2');
    await deployments().patchScale(NS, 'web', 4);
    d = await converged(4, 'back to 4');
    expect(await setsOf(d)).toHaveLength(1);
  }, 240_000);

  it('a rolling update keeps within maxSurge and maxUnavailable as a watcher sees it; undo and history work', async () => {
    // 4 replicas, 25%/25%: at most 5 pods' worth of ReplicaSets, at least 3 ready pods at any moment.
    const violations: string[] = [];
    let peakSize = 0;
    let peakPods = 0;
    let minReady = Infinity;
    const ac = new AbortController();
    const rsInf = new Informer<ReplicaSet>(new ResourceClient<ReplicaSet>(rest, REPLICASETS), { namespace: NS });
    const podInf = new Informer<Pod>(new ResourceClient<Pod>(rest, PODS), { namespace: NS, labelSelector: 'app=web' });
    // Only once both caches hold their first lists: while a list is being filed, counts are partial.
    let armed = false;
    const check = (): void => {
      if (!armed) return;
      const size = rsInf.lister.list(NS).reduce((n, rs) => n + (rs.spec.replicas ?? 0), 0);
      const live = podInf.lister.list(NS).filter((p) => !p.metadata.deletionTimestamp);
      const ready = live.filter(isPodReady).length;
      peakSize = Math.max(peakSize, size);
      peakPods = Math.max(peakPods, live.length);
      minReady = Math.min(minReady, ready);
      if (size > 5) violations.push(`ReplicaSets sized ${size} > 4 + maxSurge 1`);
      if (ready < 3) violations.push(`${ready} ready pods < 4 - maxUnavailable 1`);
    };
    for (const inf of [rsInf, podInf] as Array<Informer<ReplicaSet> | Informer<Pod>>) (inf as Informer<Pod>).addEventHandler({ onAdd: check, onUpdate: check, onDelete: check });
    const running = [rsInf.run(ac.signal), podInf.run(ac.signal)];
    try {
      await rsInf.waitForSync(ac.signal);
      await podInf.waitForSync(ac.signal);
      armed = true;
      check();
      await deployments().patch(NS, 'web', 'merge', { metadata: { annotations: { 'kubernetes.io/change-cause': 'image img:2' } }, spec: { template: { spec: { containers: [{ name: 'c', image: 'img:2' }] } } } });
      const status = await kubectl('rollout', 'status', 'deployment/web', '--timeout=90s');
      expect(status.code, status.stderr + manager.stderr.slice(-2000)).toBe(0);
      expect(status.stdout).toContain('deployment "web" successfully rolled out');
      let d = await converged(4, 'the rolling update');
      const sets = await setsOf(d);
      expect(sets.map((rs) => [rs.spec.replicas, rs.metadata.annotations?.['deployment.kubernetes.io/revision']]).sort()).toEqual([
        [0, '1'],
        [4, '2'],
      ]);
      expect(violations).toEqual([]);
      console.log(`rolling update 4 replicas 25%/25%: peak ReplicaSet size ${peakSize} (max 5), peak live pods ${peakPods}, min ready ${minReady} (min 3)`);

      const undo = await kubectl('rollout', 'undo', 'deployment/web');
      expect(undo.code, undo.stderr).toBe(0);
      expect(undo.stdout).toContain('deployment.apps/web rolled back');
      d = await converged(4, 'the rollback');
      const containers = (d.spec.template?.spec?.['containers'] ?? []) as Array<{ image?: string }>;
      expect(containers[0]?.image).toBe('img:1');
      expect(d.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('3');
      const back = (await setsOf(d)).find((rs) => rs.spec.replicas === 4);
      expect(back?.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('3');
      expect(violations).toEqual([]);

      const history = await kubectl('rollout', 'history', 'deployment/web');
      expect(history.code, history.stderr).toBe(0);
      const rows = history.stdout.trim().split('\n').slice(2).map((l) => l.trim().split(/\s+/)[0]);
      expect(rows).toEqual(['2', '3']);
      expect(history.stdout).toContain('image img:2');
    } finally {
      ac.abort();
      await Promise.allSettled(running);
    }
  }, 240_000);
});
