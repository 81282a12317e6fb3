// `setpoint agent --simulate N` at scale, on `setpoint apiserver` on a real etcd 3.4: how long N nodes take
// to be Ready, how long P pods bound to them take to be Running (creation to the last one observed by a
// list), and what the simulating process costs (CPU seconds, RSS). Prints a table.
//   node dist/bench/simulated-nodes-bench.js [nodes=1000] [pods=1000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResourceClient } from '../src/client/resource-client.js';
import { NODES, PODS } from '../src/client/resource-types.js';
import type { KubeObject } from '../src/client/kube-object.js';
import { RestClient } from '../src/client/rest-client.js';
import { startApiServerProcess } from '../src/harness/apiserver-process.js';
import { ManagedProcess } from '../src/harness/managed-process.js';
import { setpointMain } from '../src/harness/setpoint-main.js';
import { StoreCluster } from '../src/harness/store-cluster.js';
import { waitFor } from '../src/harness/wait.js';
import { processCost } from './process-cost.js';

type Obj = KubeObject & { status?: { phase?: string; conditions?: { type: string; status: string }[] } };

async function main(): Promise<void> {
  const nodesN = Number(process.argv[2] ?? 1000);
  const podsN = Number(process.argv[3] ?? 1000);
  const dir = mkdtempSync(join(tmpdir(), 'simulated-nodes-bench-'));
  const etcd = await StoreCluster.start({ program: 'etcd', size: 1, baseDir: dir });
  const api = await startApiServerProcess({ dir, etcdServers: etcd.endpoints() });
  const admin = new RestClient(api.clientConfig);
  const sim = new ManagedProcess('simulated nodes', { bin: process.execPath, args: [setpointMain(), 'agent', '--kubeconfig', api.kubeconfig, '--simulate', String(nodesN), '--node-name', 'sim', '--log-level', 'warn'] }, { logFile: join(dir, 'sim.log') });
  sim.start();
  try {
    const nodes = new ResourceClient<Obj>(admin, NODES);
    const pods = new ResourceClient<Obj>(admin, PODS);
    const t0 = performance.now();
    await waitFor(`${nodesN} Ready nodes`, async () => {
      const l = await nodes.listAll('');
      return l.items.filter((n) => n.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')).length === nodesN;
    }, { timeoutMs: 300_000, intervalMs: 500 });
    const nodesReadyS = (performance.now() - t0) / 1000;
    const afterNodes = processCost(sim.pid);

    const t1 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < podsN) {
          const i = next++;
          await pods.create({ metadata: { name: `p-${i}`, namespace: 'default' }, spec: { nodeName: `sim-${i % nodesN}`, containers: [{ name: 'c', image: 'x' }] } });
        }
      }),
    );
    const createdS = (performance.now() - t1) / 1000;
    await waitFor(`${podsN} Running pods`, async () => (await pods.listAll('default')).items.filter((p) => p.status?.phase === 'Running').length === podsN, {
      timeoutMs: 300_000,
      intervalMs: 250,
    });
    const runningS = (performance.now() - t1) / 1000;
    // A quiet 15 s: what N nodes' Lease renewals alone cost.
    const before = processCost(sim.pid);
    await new Promise((r) => setTimeout(r, 15_000));
    const idle = processCost(sim.pid);
    console.log(`simulated nodes: ${nodesN} nodes, ${podsN} pods (one process; etcd 3.4 + setpoint apiserver on this machine)`);
    console.log('| measure | value |');
    console.log('|---|---|');
    console.log(`| ${nodesN} nodes Ready (start to last seen by a list) | ${nodesReadyS.toFixed(1)} s |`);
    console.log(`| simulator CPU / RSS after registration | ${afterNodes.cpuS.toFixed(1)} s / ${afterNodes.rssMiB.toFixed(0)} MiB |`);
    console.log(`| ${podsN} pods created (16 clients) | ${createdS.toFixed(1)} s |`);
    console.log(`| ${podsN} pods Running (first create to last seen Running) | ${runningS.toFixed(1)} s |`);
    console.log(`| simulator CPU while idle (lease renewals only) | ${(((idle.cpuS - before.cpuS) / 15) * 100).toFixed(1)} % of a core |`);
    console.log(`| simulator RSS at the end | ${idle.rssMiB.toFixed(0)} MiB |`);
  } finally {
    admin.close();
    await sim.kill('SIGKILL');
    await api.stop();
    await etcd.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
