// bench:converge — Deployments converging end to end on real processes: a 3-member store (Setpoint's, then
// etcd 3.4's in the same run), one `setpoint apiserver` on it, one `setpoint scheduler`, one `setpoint
// controller-manager` and `setpoint agent --simulate N` (KWOK-like nodes: 32 cpu, 256Gi, 110 pods). Once
// every node is Ready, D Deployments of R replicas each are created at once; the time is from the first
// create to the moment a watch on Deployments has seen every one report availableReplicas = replicas for
// its generation. Also: the scheduler's throughput (pods seen bound by a watch, first bind to last), and
// each process's peak RSS (VmHWM) and CPU seconds over the run. Prints one Markdown table.
//   BENCH_CONVERGE_NODES (1000), BENCH_CONVERGE_DEPLOYMENTS (10), BENCH_CONVERGE_REPLICAS (1000),
//   BENCH_CONVERGE_STORES (setpoint,etcd), BENCH_CONVERGE_PROF=apiserver|scheduler|controller-manager
//   (that process runs with --cpu-prof; the .cpuprofile is left in BENCH_CONVERGE_PROF_DIR, default /tmp).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Informer } from '../src/client/informer.js';
import type { KubeObject } from '../src/client/kube-object.js';
import { ResourceClient } from '../src/client/resource-client.js';
import { DEPLOYMENTS, NODES, PODS } from '../src/client/resource-types.js';
import { RestClient } from '../src/client/rest-client.js';
import { startApiServerProcess } from '../src/harness/apiserver-process.js';
import { controllerManagerKind } from '../src/harness/kinds/controller-manager.js';
import { schedulerKind } from '../src/harness/kinds/scheduler.js';
import type { StoreProgram } from '../src/harness/kinds/store-member.js';
import { ManagedProcess } from '../src/harness/managed-process.js';
import { startProcess } from '../src/harness/process-kind.js';
import { setpointMain } from '../src/harness/setpoint-main.js';
import { StoreCluster } from '../src/harness/store-cluster.js';
import { waitFor } from '../src/harness/wait.js';
import { markdownTable } from './markdown-table.js';
import { processCost, type ProcessCost } from './process-cost.js';
import { scrapeLoop } from '../src/harness/loop-metrics.js';

const NODE_COUNT = Number(process.env.BENCH_CONVERGE_NODES ?? 1_000);
const DEPLOYMENT_COUNT = Number(process.env.BENCH_CONVERGE_DEPLOYMENTS ?? 10);
const REPLICAS = Number(process.env.BENCH_CONVERGE_REPLICAS ?? 1_000);
const STORES = (process.env.BENCH_CONVERGE_STORES ?? 'setpoint,etcd').split(',').filter(Boolean) as StoreProgram[];
const PROF = process.env.BENCH_CONVERGE_PROF ?? '';
const PROF_DIR = process.env.BENCH_CONVERGE_PROF_DIR ?? tmpdir();
const NS = 'default';

type Obj = KubeObject & {
  spec?: { replicas?: number; nodeName?: string };
  status?: { availableReplicas?: number; observedGeneration?: number; conditions?: { type: string; status: string }[] };
};

type Cost = Pick<ProcessCost, 'cpuS' | 'peakMiB'>;
const cost = processCost;

function profiled(component: string): Record<string, string> {
  return PROF === component ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${PROF_DIR} --cpu-prof-name=converge-${component}-${Date.now()}.cpuprofile` } : {};
}

export interface ConvergeResult {
  readonly store: StoreProgram;
  readonly convergeS: number;
  readonly allCreatedS: number;
  readonly allBoundS: number;
  readonly schedPodsPerS: number;
  readonly costs: Readonly<Record<'apiserver' | 'scheduler' | 'controller-manager' | 'agent', Cost>>;
  readonly load: string;
  /** Setpoint's store: the longest any member's own running held its loop, and the longest loop delay (ms). */
  readonly storeLoop?: { readonly heldMs: number; readonly wallMs: number };
}

function deployment(i: number): KubeObject {
  const app = `converge-${i}`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: app, namespace: NS },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: { app } },
      template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'pause', image: 'pause', resources: { requests: { cpu: '100m', memory: '500Mi' } } }] } },
    },
  };
}

async function runOne(program: StoreProgram): Promise<ConvergeResult> {
  const dir = mkdtempSync(join(tmpdir(), `converge-bench-${program}-`));
  const store = await StoreCluster.start({ program, size: 3, dir: join(dir, 'store') });
  const procs: ManagedProcess[] = [];
  const ac = new AbortController();
  let rest: RestClient | undefined;
  try {
    const api = await startApiServerProcess({ dir, etcdServers: store.endpoints(), env: profiled('apiserver') });
    procs.push(api.process);
    rest = new RestClient(api.clientConfig);
    const agent = new ManagedProcess(
      'simulated nodes',
      { bin: process.execPath, args: [setpointMain(), 'agent', `--kubeconfig=${api.kubeconfig}`, `--simulate=${NODE_COUNT}`, '--node-name=sim', '--log-level=warn'] },
      { logFile: join(dir, 'agent.log') },
    );
    agent.start();
    procs.push(agent);
    const nodes = new ResourceClient<Obj>(rest, NODES);
    await waitFor(
      `${NODE_COUNT} Ready nodes`,
      async () => (await nodes.listAll('')).items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === NODE_COUNT,
      { timeoutMs: 600_000, intervalMs: 1000, detail: () => agent.logTail(5) },
    );
    const started = async (kind: typeof schedulerKind | typeof controllerManagerKind, name: string): Promise<ManagedProcess> => {
      let synced = false;
      const { process: p } = await startProcess(
        kind,
        { kubeconfig: api.kubeconfig, flags: ['--leader-elect=false'], synced: () => synced, env: profiled(name) },
        { name, dir, output: { onLine: (l) => (synced ||= l.includes('"caches synced"')) }, timeoutMs: 300_000 },
      );
      procs.push(p);
      return p;
    };
    const scheduler = await started(schedulerKind, 'scheduler');
    const manager = await started(controllerManagerKind, 'controller-manager');
    const before = { apiserver: cost(api.process.pid), scheduler: cost(scheduler.pid), 'controller-manager': cost(manager.pid), agent: cost(agent.pid) };

    const deployments = new ResourceClient<Obj>(rest, DEPLOYMENTS);
    const pods = new ResourceClient<Obj>(rest, PODS);
    const total = DEPLOYMENT_COUNT * REPLICAS;
    const bound = new Set<string>();
    let firstBindAt = 0;
    let lastBindAt = 0;
    const available = new Map<string, boolean>();
    let convergedAt = 0;
    // Informers, not bare watches: they watch again from the last resourceVersion when the server ends a
    // watch (its timeout, a terminated slow watcher) and relist on a 410, so a long run cannot miss the end.
    const podInformer = new Informer<Obj>(pods, { namespace: NS });
    const deploymentInformer = new Informer<Obj>(deployments, { namespace: NS });
    const seePod = (o: Obj): void => {
      const uid = o.metadata?.uid ?? '';
      if ((o.spec?.nodeName ?? '') !== '' && !bound.has(uid)) {
        bound.add(uid);
        lastBindAt = performance.now();
        if (firstBindAt === 0) firstBindAt = lastBindAt;
      }
    };
    const seeDeployment = (d: Obj): void => {
      const name = d.metadata?.name ?? '';
      const done = (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) && (d.status?.availableReplicas ?? 0) === (d.spec?.replicas ?? 0);
      available.set(name, done);
      if (convergedAt === 0 && available.size === DEPLOYMENT_COUNT && [...available.values()].every(Boolean)) convergedAt = performance.now();
    };
    podInformer.addEventHandler({ onAdd: seePod, onUpdate: (_, o) => seePod(o) });
    deploymentInformer.addEventHandler({ onAdd: seeDeployment, onUpdate: (_, d) => seeDeployment(d) });
    const watchingPods = podInformer.run(ac.signal);
    const watchingDeployments = deploymentInformer.run(ac.signal);
    if (!(await podInformer.waitForSync(ac.signal)) || !(await deploymentInformer.waitForSync(ac.signal))) throw new Error('the bench informers did not sync');

    // The store's members' loops while the rollout runs (issue 28): every scrape starts a new window, so
    // scraping every 2 s and keeping the largest gives the longest hold over the run.
    const storeLoop = { heldMs: 0, wallMs: 0 };
    const sampleLoops = async (): Promise<void> => {
      for (const m of store.running()) {
        const f = await scrapeLoop(store.clientUrl(m)).catch(() => undefined);
        if (f) Object.assign(storeLoop, { heldMs: Math.max(storeLoop.heldMs, f.held * 1000), wallMs: Math.max(storeLoop.wallMs, f.wall * 1000) });
      }
    };
    if (program === 'setpoint') await sampleLoops();
    Object.assign(storeLoop, { heldMs: 0, wallMs: 0 });
    const sampler = program === 'setpoint' ? setInterval(() => void sampleLoops(), 2000) : undefined;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: DEPLOYMENT_COUNT }, (_, i) => deployments.create(deployment(i))));
    const createdAt = performance.now();
    await waitFor(`${DEPLOYMENT_COUNT} Deployments of ${REPLICAS} available`, () => convergedAt > 0, {
      timeoutMs: 1_800_000,
      intervalMs: 200,
      detail: () => `${bound.size}/${total} pods bound; ${[...available.values()].filter(Boolean).length} Deployments available`,
    });
    clearInterval(sampler);
    if (program === 'setpoint') await sampleLoops();
    const after = { apiserver: cost(api.process.pid), scheduler: cost(scheduler.pid), 'controller-manager': cost(manager.pid), agent: cost(agent.pid) };
    const spent = (k: keyof typeof after): Cost => ({ cpuS: after[k].cpuS - before[k].cpuS, peakMiB: after[k].peakMiB });
    const result: ConvergeResult = {
      store: program,
      convergeS: (convergedAt - t0) / 1000,
      allCreatedS: (createdAt - t0) / 1000,
      allBoundS: (lastBindAt - t0) / 1000,
      schedPodsPerS: bound.size / Math.max(0.001, (lastBindAt - firstBindAt) / 1000),
      costs: { apiserver: spent('apiserver'), scheduler: spent('scheduler'), 'controller-manager': spent('controller-manager'), agent: spent('agent') },
      load: loadavg()
        .map((l) => l.toFixed(2))
        .join(' '),
      ...(program === 'setpoint' ? { storeLoop } : {}),
    };
    ac.abort();
    await Promise.all([watchingPods, watchingDeployments]);
    // A profiled process writes its profile on a clean exit.
    for (const p of procs.reverse()) await p.kill(PROF === '' ? 'SIGKILL' : 'SIGTERM');
    return result;
  } finally {
    ac.abort();
    rest?.close();
    for (const p of procs) await p.kill('SIGKILL');
    await store.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: ConvergeResult[] = [];
for (const s of STORES) {
  console.error(`converge: ${s} store, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  results.push(await runOne(s));
}
const label = (s: StoreProgram): string => (s === 'setpoint' ? "Setpoint's store (3 members)" : 'etcd 3.4 (3 members)');
const mem = (c: Cost): string => `${c.peakMiB.toFixed(0)} MiB / ${c.cpuS.toFixed(0)} s`;
console.log(
  `Deployments converging end to end: ${NODE_COUNT} simulated nodes, ${DEPLOYMENT_COUNT} Deployments × ${REPLICAS} replicas created at once (real processes; one machine shared with other work)`,
);
console.log(
  markdownTable([
    ['store behind the API server', 'all created', 'all bound', 'converged (all available)', 'scheduler pods/s', 'apiserver peak RSS / CPU', 'scheduler peak RSS / CPU', 'controller-manager peak RSS / CPU', 'agent peak RSS / CPU', 'store loop held / delay, longest', 'load avg at end'],
    ...results.map((r) => [
      label(r.store),
      `${r.allCreatedS.toFixed(2)} s`,
      `${r.allBoundS.toFixed(1)} s`,
      `${r.convergeS.toFixed(1)} s`,
      r.schedPodsPerS.toFixed(0),
      mem(r.costs.apiserver),
      mem(r.costs.scheduler),
      mem(r.costs['controller-manager']),
      mem(r.costs.agent),
      r.storeLoop ? `${r.storeLoop.heldMs.toFixed(0)} / ${r.storeLoop.wallMs.toFixed(0)} ms` : '—',
      r.load,
    ]),
  ]),
);
