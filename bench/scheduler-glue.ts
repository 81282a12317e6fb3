// The scheduler's full glue path, as processes: a `setpoint apiserver` on etcd 3.4, Nodes and pending
// pods created through the API, then one `setpoint scheduler` (no leader election) started: the time from
// its caches having synced to the last pod seen bound by a watch — informers, queue, cycle, pods/binding
// through the API server into the store, and the watch back. Also the scheduler's resident memory then.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../src/client/kube-object.js';
import { ResourceClient } from '../src/client/resource-client.js';
import { NODES, PODS } from '../src/client/resource-types.js';
import { RestClient } from '../src/client/rest-client.js';
import { startApiServerProcess } from '../src/harness/apiserver-process.js';
import { schedulerKind } from '../src/harness/kinds/scheduler.js';
import { startProcess } from '../src/harness/process-kind.js';
import { StoreCluster } from '../src/harness/store-cluster.js';
import { waitFor } from '../src/harness/wait.js';

export interface GlueResult {
  readonly nodes: number;
  readonly pods: number;
  readonly podsPerSec: number;
  readonly seconds: number;
  readonly schedulerRssMB: number;
}

async function inBatches<T>(items: readonly T[], width: number, f: (t: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(f));
}

function rssMB(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

export async function runGlue(nodes: number, pods: number): Promise<GlueResult> {
  const dir = mkdtempSync(join(tmpdir(), 'scheduler-glue-bench-'));
  const etcd = await StoreCluster.start({ program: 'etcd', size: 1, names: ['m0'], dir: join(dir, 'etcd') }, 'leader');
  const api = await startApiServerProcess({ dir, etcdServers: etcd.endpoints() });
  const rest = new RestClient(api.clientConfig);
  const ac = new AbortController();
  let sched: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    const nodeClient = new ResourceClient(rest, NODES);
    const podClient = new ResourceClient(rest, PODS);
    const resources = { cpu: '4', memory: '32Gi', pods: '110' };
    await inBatches(
      Array.from({ length: nodes }, (_, i) => i),
      20,
      async (i) => {
        const name = `node-${i}`;
        const made = await nodeClient.create({ metadata: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': `zone-${i % 3}` } } });
        await nodeClient.updateStatus({ ...made, status: { capacity: resources, allocatable: resources, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } });
      },
    );
    await inBatches(
      Array.from({ length: pods }, (_, i) => i),
      50,
      (i) => podClient.create({ metadata: { name: `pod-${i}`, namespace: 'default', labels: { app: 'basic' } }, spec: { containers: [{ name: 'pause', image: 'pause', resources: { requests: { cpu: '100m', memory: '500Mi' } } }] } }),
    );
    const list = await podClient.list('default', { limit: 1 });
    let bound = 0;
    let lastBoundAt = 0;
    const seen = new Set<string>();
    const watching = (async () => {
      for await (const ev of podClient.watch('default', { resourceVersion: list.metadata.resourceVersion ?? '', signal: ac.signal })) {
        const o = ev.object as KubeObject & { spec?: { nodeName?: string } };
        const name = o.metadata?.name ?? '';
        if ((o.spec?.nodeName ?? '') !== '' && !seen.has(name)) {
          seen.add(name);
          bound++;
          lastBoundAt = Date.now();
        }
      }
    })().catch(() => undefined);
    let syncedAt = 0;
    const onLine = (line: string): void => {
      if (line.includes('"caches synced"')) syncedAt = Number((JSON.parse(line) as { time?: number }).time ?? Date.now());
    };
    sched = await startProcess(schedulerKind, { kubeconfig: api.kubeconfig, flags: ['--leader-elect=false', '--log-level=info'], synced: () => syncedAt > 0 }, { name: 'scheduler', dir, output: { onLine }, timeoutMs: 120_000 });
    await waitFor(`${pods} pods to be bound`, () => bound >= pods, { timeoutMs: 600_000, intervalMs: 50, detail: () => `${bound} bound` });
    const seconds = (lastBoundAt - syncedAt) / 1000;
    const result = { nodes, pods, podsPerSec: pods / seconds, seconds, schedulerRssMB: rssMB(sched.process.pid) };
    ac.abort();
    await watching;
    return result;
  } finally {
    ac.abort();
    await sched?.process.kill('SIGKILL');
    rest.close();
    await api.stop();
    await etcd.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
