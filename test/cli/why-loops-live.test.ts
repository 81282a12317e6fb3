// The loops' records on a live control plane: `setpoint apiserver`, `setpoint scheduler`, `setpoint
// controller-manager` and `setpoint agent --simulate 3` as processes on a real etcd 3.4, and a validating
// webhook in this process. A Deployment whose pods ask for more cpu than any node has, and a ReplicaSet whose
// pods the webhook denies: the scheduler's diagnosis and the controllers' records land in the `reconcile`
// subresource, and `setpoint why` prints them. Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiStatusError } from '../../src/client/api-status-error.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { NODES, PODS } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import { startApiServerProcess, type ApiServerProcess } from '../../src/harness/apiserver-process.js';
import { runCommand } from '../../src/harness/command.js';
import { controllerManagerKind } from '../../src/harness/kinds/controller-manager.js';
import { schedulerKind } from '../../src/harness/kinds/scheduler.js';
import type { ManagedProcess } from '../../src/harness/managed-process.js';
import { startProcess } from '../../src/harness/process-kind.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';
import { waitFor } from '../../src/harness/wait.js';
import { startWebhookServer, type WebhookServer } from '../../src/harness/webhook-server.js';
import { kill, startMain, type Proc } from '../agent/helpers/agent-cluster.js';
import { StoreTestCluster } from '../etcd-client/helpers/store-cluster.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const template = (app: string, cpu: string): Obj => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'app', image: 'busybox', resources: { requests: { cpu } } }] },
});

describe('the loops’ records, read by setpoint why', () => {
  let dir: string;
  let etcd: StoreTestCluster;
  let api: ApiServerProcess;
  let hooks: WebhookServer;
  let scheduler: ManagedProcess | undefined;
  let manager: ManagedProcess | undefined;
  let sim: Proc | undefined;
  let rest: RestClient;
  const why = async (...args: string[]): Promise<string> => {
    const r = await runCommand({ bin: process.execPath, args: [setpointMain(), 'why', ...args, '--kubeconfig', api.kubeconfig] });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };
  const records = async (path: string): Promise<Obj[]> => {
    try {
      return (await rest.request<Obj>({ path: `${path}/reconcile` })).items as Obj[];
    } catch (e) {
      if (isApiStatusError(e, 'NotFound')) return [];
      throw e;
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'why-loops-'));
    [etcd, hooks] = await Promise.all([StoreTestCluster.start('etcd'), startWebhookServer()]);
    api = await startApiServerProcess({ dir, etcdServers: etcd.endpoints() });
    rest = new RestClient(api.clientConfig);
    // Pods labelled app=denied are refused by the webhook; the admission cache has it once a dry run is denied.
    await rest.request({
      method: 'POST',
      path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'deny-some-pods' },
        webhooks: [
          {
            name: 'deny.example.com',
            clientConfig: { url: hooks.url('/deny'), caBundle: hooks.caBundle },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
            objectSelector: { matchLabels: { app: 'denied' } },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
    });
    const pods = new ResourceClient(rest, PODS);
    await waitFor('the webhook in the API server’s admission', () =>
      pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', namespace: 'default', labels: { app: 'denied' } }, spec: { containers: [{ name: 'c', image: 'i' }] } }, { dryRun: true }).then(
        () => false,
        (e: unknown) => isApiStatusError(e, 'Forbidden'),
      ),
    );
    let schedSynced = false;
    let cmSynced = false;
    ({ process: scheduler } = await startProcess(schedulerKind, { kubeconfig: api.kubeconfig, synced: () => schedSynced }, { name: 'scheduler', dir, output: { capture: true, onLine: (l) => (schedSynced ||= l.includes('caches synced')) } }));
    ({ process: manager } = await startProcess(controllerManagerKind, { kubeconfig: api.kubeconfig, synced: () => cmSynced }, { name: 'controller-manager', dir, output: { capture: true, onLine: (l) => (cmSynced ||= l.includes('caches synced')) } }));
    sim = startMain(['agent', '--kubeconfig', api.kubeconfig, '--simulate', '3', '--node-name', 'kwok']);
    const nodes = new ResourceClient(rest, NODES);
    await waitFor('3 simulated nodes', async () => (await nodes.list('')).items.length === 3, { timeoutMs: 60_000, detail: () => sim?.output().slice(-2000) ?? '' });

    await rest.request({
      method: 'POST',
      path: '/apis/apps/v1/namespaces/default/deployments',
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'huge' }, spec: { replicas: 2, selector: { matchLabels: { app: 'huge' } }, template: template('huge', '64') } },
    });
    await rest.request({
      method: 'POST',
      path: '/apis/apps/v1/namespaces/default/replicasets',
      body: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'denied' }, spec: { replicas: 2, selector: { matchLabels: { app: 'denied' } }, template: template('denied', '1') } },
    });
  }, 180_000);
  afterAll(async () => {
    await kill(sim, 'SIGTERM');
    await scheduler?.kill('SIGTERM');
    await manager?.kill('SIGTERM');
    rest?.close();
    await api?.stop();
    await Promise.all([etcd?.stop(), hooks?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('an impossible pod carries the scheduler’s diagnosis, and why prints the per-node rejections and the feasibility count', async () => {
    const pods = new ResourceClient(rest, PODS);
    let pod = '';
    const rec = await waitFor(
      'the scheduler’s record on a pod of huge, with both pods counted pending',
      async () => {
        for (const p of (await pods.list('default', { labelSelector: 'app=huge' })).items) {
          const r = (await records(`/api/v1/namespaces/default/pods/${p.metadata?.name ?? ''}`)).find((x) => x.controller === 'default-scheduler');
          if (r?.details?.feasibility?.pending === 2) {
            pod = p.metadata?.name ?? '';
            return r;
          }
        }
        return undefined;
      },
      { timeoutMs: 90_000 },
    );
    expect(rec.message).toMatch(/^0\/3 nodes are available: 3 Insufficient cpu\. preemption: /);
    expect(rec).toMatchObject({ outcome: 'waiting', action: 'wait', gap: { desired: { scheduled: true }, actual: { scheduled: false, nodes: 3 } } });
    expect(rec.details.nodes).toHaveLength(3);
    expect(rec.details.nodes[0]).toMatchObject({ plugin: 'NodeResourcesFit', details: { insufficient: [{ resource: 'cpu', requested: 64000, allocatable: 32000 }] } });
    expect(rec.details.feasibility).toMatchObject({ pending: 2, couldFit: 0, capacity: 0, eligibleNodes: 3 });
    expect(rec.count).toBeGreaterThanOrEqual(1);

    const out = await why(`pod/${pod}`);
    expect(out).toMatch(/! default-scheduler: wait, waiting \(scheduled false\/true, feasibleNodes 0, nodes 3\): 0\/3 nodes are available: 3 Insufficient cpu\. preemption: .* {2}\[\S+ \(\d+s ago\), by default-scheduler/);
    expect(out).toContain('· default-scheduler: 0/3 nodes feasible; rejected by NodeResourcesFit on 3');
    expect(out).toMatch(/· node kwok-\d: NodeResourcesFit: Insufficient cpu \(cpu requested 64000, used 0, allocatable 32000\)/);
    expect(out).toContain('· feasibility: 0 of 2 pending pods of its controller could fit now (room for 0 on 3 eligible nodes; limited by cpu on 3)');

    const dep = await waitFor('the deployment controller’s record', async () => (await records('/apis/apps/v1/namespaces/default/deployments/huge')).find((x) => x.controller === 'deployment-controller' && x.gap.actual.replicas === 2));
    expect(dep).toMatchObject({ outcome: 'waiting', gap: { desired: { replicas: 2 }, actual: { replicas: 2, available: 0 } } });
    const whyDep = await why('deployment/huge');
    expect(whyDep).toMatch(/! deployment-controller: (wait|create replica set huge-\S+), waiting \(replicas 2\/2, updated 2, ready 0, available 0\)/);
    expect(whyDep).toContain('feasibility: 0 of 2 pending pods');
  });

  it('a ReplicaSet whose pods a webhook denies records the FailedCreate, and why prints it as the cause', async () => {
    const rec = await waitFor('the replicaset controller’s error record', async () => (await records('/apis/apps/v1/namespaces/default/replicasets/denied')).find((x) => x.controller === 'replicaset-controller' && x.outcome === 'error'), {
      timeoutMs: 90_000,
    });
    expect(rec).toMatchObject({ action: 'create 2', gap: { desired: { replicas: 2 }, actual: { replicas: 0, ready: 0, available: 0 } } });
    expect(rec.message).toBe('FailedCreate: admission webhook "deny.example.com" denied the request: no pods here');
    const out = await why('replicaset/denied');
    // Among the causes, beside the ReplicaFailure condition it explains with the gap and the action.
    expect(out.split('\n').slice(1, 4)).toContainEqual(expect.stringMatching(/^ {2}✗ ReplicaSet default\/denied: replicaset-controller: create 2 failed \(replicas 0\/2, ready 0, available 0\): FailedCreate: admission webhook "deny.example.com" denied the request: no pods here$/));
    expect(out).toMatch(/✗ replicaset-controller: create 2 failed .*\[\S+ \(\d+s ago\), by replicaset-controller/);
  });

  it('the binding replaces the scheduler’s diagnosis on a pod that was unschedulable', async () => {
    const pods = new ResourceClient(rest, PODS);
    await pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'picky', namespace: 'default' }, spec: { nodeSelector: { want: 'yes' }, containers: [{ name: 'c', image: 'i' }] } });
    const waiting = await waitFor('picky’s diagnosis', async () => (await records('/api/v1/namespaces/default/pods/picky')).find((x) => x.outcome === 'waiting'), { timeoutMs: 60_000 });
    expect(waiting.details.nodes.map((n: Obj) => n.plugin)).toEqual(['NodeAffinity', 'NodeAffinity', 'NodeAffinity']);
    expect(waiting.details.feasibility).toBeUndefined();
    await new ResourceClient(rest, NODES).patch('', 'kwok-1', 'merge', { metadata: { labels: { want: 'yes' } } });
    const bound = await waitFor('picky’s record after its binding', async () => (await records('/api/v1/namespaces/default/pods/picky')).find((x) => x.outcome === 'ok'), { timeoutMs: 60_000 });
    expect(bound).toMatchObject({ controller: 'default-scheduler', action: 'bind to kwok-1', gap: { actual: { scheduled: true, nodeName: 'kwok-1' } }, count: 1 });
    expect(bound.details).toBeUndefined();
    expect(await records('/api/v1/namespaces/default/pods/picky')).toHaveLength(1);
  });
});
