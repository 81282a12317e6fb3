// `setpoint why` on a live control plane: `setpoint apiserver`, `setpoint scheduler` and `setpoint
// controller-manager` as processes on a real etcd 3.4, one Node with 1 CPU, and a Deployment whose pods ask
// for 2. Nothing is written by the test but the Node and the Deployment: the ReplicaSet, the pods, their
// PodScheduled condition and FailedScheduling events come from the real loops, and `why` must point the
// Deployment at the scheduler's FitError. Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { StoreTestCluster } from '../etcd-client/helpers/store-cluster.js';

describe('setpoint why on live loops', () => {
  let dir: string;
  let etcd: StoreTestCluster;
  let api: ApiServerProcess;
  let scheduler: ManagedProcess | undefined;
  let manager: ManagedProcess | undefined;
  let rest: RestClient;
  const why = async (...args: string[]): Promise<string> => {
    const r = await runCommand({ bin: process.execPath, args: [setpointMain(), 'why', ...args, '--kubeconfig', api.kubeconfig] });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'why-live-'));
    etcd = await StoreTestCluster.start('etcd');
    api = await startApiServerProcess({ dir, etcdServers: etcd.endpoints() });
    rest = new RestClient(api.clientConfig);
    let schedSynced = false;
    let cmSynced = false;
    ({ process: scheduler } = await startProcess(schedulerKind, { kubeconfig: api.kubeconfig, synced: () => schedSynced }, { name: 'scheduler', dir, output: { capture: true, onLine: (l) => (schedSynced ||= l.includes('caches synced')) } }));
    ({ process: manager } = await startProcess(controllerManagerKind, { kubeconfig: api.kubeconfig, synced: () => cmSynced }, { name: 'controller-manager', dir, output: { capture: true, onLine: (l) => (cmSynced ||= l.includes('caches synced')) } }));
    const nodes = new ResourceClient(rest, NODES);
    await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'small', labels: { 'kubernetes.io/hostname': 'small' } } });
    await nodes.patchStatus('', 'small', 'merge', {
      status: {
        capacity: { cpu: '1', memory: '1Gi', pods: '10' },
        allocatable: { cpu: '1', memory: '1Gi', pods: '10' },
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }],
      },
    });
    await rest.request({
      method: 'POST',
      path: '/apis/apps/v1/namespaces/default/deployments',
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'big' },
        spec: { replicas: 2, selector: { matchLabels: { app: 'big' } }, template: { metadata: { labels: { app: 'big' } }, spec: { containers: [{ name: 'app', image: 'busybox', resources: { requests: { cpu: '2' } } }] } } },
      },
    });
  }, 180_000);
  afterAll(async () => {
    await scheduler?.kill('SIGTERM');
    await manager?.kill('SIGTERM');
    rest?.close();
    await api?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("points the Deployment at the scheduler's FitError on its pods", async () => {
    const pods = new ResourceClient(rest, PODS);
    await waitFor(
      'two pods marked unschedulable by the scheduler',
      async () => {
        const list = await pods.list('default', { labelSelector: 'app=big' });
        const unschedulable = list.items.filter((p) => ((p.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False'));
        return unschedulable.length === 2;
      },
      { timeoutMs: 90_000 },
    );
    const out = await why('deployment/big');
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^Deployment default\/big is not converging \(0\/2 available, 2 updated, 2 total\), because:$/);
    expect(lines[1]).toMatch(/^ {2}✗ Pod default\/big-\S+ \(and 1 more alike\): PodScheduled=False Unschedulable: 0\/1 nodes are available: 1 Insufficient cpu\./);
    expect(out).toMatch(/└─ ReplicaSet default\/big-\S+: 0\/2 ready, 2 created \(not converged\)/);
    expect(out).toMatch(/✗ PodScheduled=False Unschedulable: 0\/1 nodes are available: 1 Insufficient cpu\..*by default-scheduler/);
    // The admission history comes from the real `setpoint apiserver`'s history subresource, with the kubeconfig only.
    expect(out).not.toContain('admission history not read');
    expect(out).toContain('spec mutated by the system on CREATE');
  });
});
