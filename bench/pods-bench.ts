// bench:pods — pod startup latency end to end (issue 28): from the client's create to the moment a watch
// on pods sees the pod Running, p50/p99, with pods created at a steady 10 and 100 pods/s. On real processes
// (one `setpoint agent` running each pod's container as a local process) and on simulated nodes (`setpoint
// agent --simulate`), behind a `setpoint apiserver` and a `setpoint scheduler` (the pods are bare: the
// scheduler binds them), on Setpoint's store and on etcd 3.4's, each 3 members, in the same run. Also the
// real agent's CPU and memory per running pod (its RSS and its CPU over a quiet 10 s, with every pod
// running against none). Kubernetes' SLO: p99 ≤ 5 s; the issue's target ≤ 1 s.
//   BENCH_PODS_STORES (setpoint,etcd), BENCH_PODS_REAL (pods per real-process run, 100; a node takes 110),
//   BENCH_PODS_SIM (pods per simulated run, 1000), BENCH_PODS_RATES (10,100), BENCH_PODS_AGENT_LOG (the real
//   agent's --log-level, warn; at debug the bench also prints the agent's queue waits and status-write times)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCertDirCa } from '../src/apiserver/pki/cert-dir.js';
import { writeClientKubeconfig } from '../src/apiserver/pki/kubeconfig.js';
import { stopAdoptedPods } from '../src/agent/stop-pods.js';
import type { KubeObject } from '../src/client/kube-object.js';
import { ResourceClient } from '../src/client/resource-client.js';
import { NODES, PODS } from '../src/client/resource-types.js';
import { RestClient } from '../src/client/rest-client.js';
import { startApiServerProcess } from '../src/harness/apiserver-process.js';
import { schedulerKind } from '../src/harness/kinds/scheduler.js';
import type { StoreProgram } from '../src/harness/kinds/store-member.js';
import { ManagedProcess } from '../src/harness/managed-process.js';
import { startProcess } from '../src/harness/process-kind.js';
import { setpointMain } from '../src/harness/setpoint-main.js';
import { StoreCluster } from '../src/harness/store-cluster.js';
import { waitFor } from '../src/harness/wait.js';
import { markdownTable } from './markdown-table.js';
import { processCost } from './process-cost.js';

const STORES = (process.env.BENCH_PODS_STORES ?? 'setpoint,etcd').split(',').filter(Boolean) as StoreProgram[];
const REAL_PODS = Number(process.env.BENCH_PODS_REAL ?? 100);
const SIM_PODS = Number(process.env.BENCH_PODS_SIM ?? 1000);
const RATES = (process.env.BENCH_PODS_RATES ?? '10,100').split(',').map(Number);
const SIM_NODES = Math.max(1, Math.ceil(SIM_PODS / 100));
const NS = 'default';
/** The real agent's --log-level (BENCH_PODS_AGENT_LOG; its log is kept with BENCH_KEEP=1). */
const AGENT_LOG = process.env.BENCH_PODS_AGENT_LOG ?? 'warn';
const KEEP = process.env.BENCH_KEEP === '1';
const REAL_NODE = 'bench-node';

type Obj = KubeObject & { spec?: { nodeName?: string }; status?: { phase?: string; conditions?: { type: string; status: string }[] } };

interface Row {
  readonly store: StoreProgram;
  readonly nodes: 'real processes' | 'simulated';
  readonly rate: number;
  readonly pods: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** create → seen bound, p50. */
  readonly boundP50: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

class PodRun {
  private readonly created = new Map<string, number>();
  private readonly latencies: number[] = [];
  /** create → first seen bound (spec.nodeName set), for the pods seen bound. */
  readonly toBound: number[] = [];
  private readonly bound = new Set<string>();
  private readonly ac = new AbortController();

  constructor(
    private readonly pods: ResourceClient<Obj>,
    private readonly prefix: string,
  ) {}

  /**
   * Watches pods from `rv`, noting when each of this run's pods is first seen Running; a watch the server
   * ends is resumed from the last resourceVersion seen, until stop().
   */
  async watch(rv: string): Promise<void> {
    let from = rv;
    while (!this.ac.signal.aborted) {
      try {
        for await (const ev of this.pods.watch(NS, { resourceVersion: from, labelSelector: `bench=${this.prefix}`, signal: this.ac.signal })) {
          from = ev.object.metadata?.resourceVersion ?? from;
          this.seen(ev.object as Obj);
        }
      } catch (e) {
        if (!this.ac.signal.aborted) process.stderr.write(`watch ended: ${(e as Error).message}; resuming from ${from}\n`);
      }
    }
  }

  stop(): void {
    this.ac.abort();
  }

  private seen(o: Obj): void {
    const name = o.metadata?.name ?? '';
    const t0 = this.created.get(name);
    if (t0 !== undefined && (o.spec?.nodeName ?? '') !== '' && !this.bound.has(name)) {
      this.bound.add(name);
      this.toBound.push(performance.now() - t0);
    }
    if (t0 !== undefined && o.status?.phase === 'Running') {
      this.latencies.push(performance.now() - t0);
      this.created.delete(name);
    }
  }

  /** Creates `n` pods at `rate` per second (each create on its own schedule, not waiting for the last). */
  async create(n: number, rate: number, spec: (i: number) => Record<string, unknown>): Promise<void> {
    const t0 = performance.now();
    const creates: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const name = `${this.prefix}-${i}`;
      this.created.set(name, performance.now());
      creates.push(this.pods.create({ metadata: { name, namespace: NS, labels: { bench: this.prefix } }, spec: spec(i) }));
    }
    await Promise.all(creates);
  }

  async untilAllRunning(n: number): Promise<number[]> {
    await waitFor(`${n} pods of ${this.prefix} seen Running`, () => this.latencies.length >= n, { timeoutMs: 600_000, intervalMs: 100, detail: () => `${this.latencies.length}/${n}` });
    return [...this.latencies].sort((a, b) => a - b);
  }
}

async function startScheduler(kubeconfig: string, dir: string): Promise<ManagedProcess> {
  let synced = false;
  const { process: p } = await startProcess(
    schedulerKind,
    { kubeconfig, flags: ['--leader-elect=false'], synced: () => synced },
    { name: 'scheduler', dir, output: { onLine: (l) => (synced ||= l.includes('"caches synced"')) }, timeoutMs: 300_000 },
  );
  return p;
}

async function readyNodes(nodes: ResourceClient<Obj>, n: number): Promise<void> {
  await waitFor(`${n} Ready nodes`, async () => (await nodes.listAll('')).items.filter((x) => x.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length >= n, {
    timeoutMs: 300_000,
    intervalMs: 500,
  });
}

/** Deletes this run's pods and waits until they are gone (the real agent stops their processes). */
async function clear(pods: ResourceClient<Obj>, prefix: string): Promise<void> {
  await pods.deleteCollection(NS, { labelSelector: `bench=${prefix}`, gracePeriodSeconds: 0 });
  await waitFor(`pods of ${prefix} gone`, async () => (await pods.listAll(NS, { labelSelector: `bench=${prefix}` })).items.length === 0, { timeoutMs: 300_000, intervalMs: 500 });
}

/** With BENCH_PODS_AGENT_LOG=debug: the real agent's queue waits and status writes from its log, p50/p99 (ms). */
function agentTimings(logFile: string): string | undefined {
  if (AGENT_LOG !== 'debug' && AGENT_LOG !== 'trace') return undefined;
  const waits: number[] = [];
  const writes: number[] = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"pod sync dequeued"') && !line.includes('"pod status written"')) continue;
    const j = JSON.parse(line) as { msg: string; waitedMs?: number; ms?: number };
    if (j.msg === 'pod sync dequeued') waits.push(j.waitedMs ?? 0);
    else writes.push(j.ms ?? 0);
  }
  const pq = (a: number[]): string => {
    const s = [...a].sort((x, y) => x - y);
    return `${quantile(s, 0.5).toFixed(0)} / ${quantile(s, 0.99).toFixed(0)}`;
  };
  return `the agent's queue wait p50 / p99 ${pq(waits)} ms (${waits.length} syncs); its status writes p50 / p99 ${pq(writes)} ms (${writes.length} writes)`;
}

async function runStore(program: StoreProgram): Promise<{ rows: Row[]; perPod: { cpuPct: number; rssMiB: number; pods: number }; agent?: string | undefined }> {
  const dir = mkdtempSync(join(tmpdir(), `pods-bench-${program}-`));
  const store = await StoreCluster.start({ program, size: 3, dir: join(dir, 'store') });
  const procs: ManagedProcess[] = [];
  let rest: RestClient | undefined;
  const agentRoot = join(dir, 'agent');
  try {
    const api = await startApiServerProcess({ dir, etcdServers: store.endpoints() });
    procs.push(api.process);
    rest = new RestClient(api.clientConfig);
    const nodeKubeconfig = join(dir, 'node.kubeconfig');
    await writeClientKubeconfig(nodeKubeconfig, readCertDirCa(join(dir, 'apiserver-certs')), { server: api.url, user: `system:node:${REAL_NODE}`, groups: ['system:nodes'] });
    const agent = new ManagedProcess(
      'agent',
      {
        bin: process.execPath,
        args: [setpointMain(), 'agent', `--kubeconfig=${nodeKubeconfig}`, `--node-name=${REAL_NODE}`, `--root-dir=${agentRoot}`, '--port=0', '--pod-cidr=127.1.250.0/24', `--max-pods=${REAL_PODS + 10}`, `--log-level=${AGENT_LOG}`],
      },
      { logFile: join(dir, 'agent.log') },
    );
    agent.start();
    procs.push(agent);
    const sim = new ManagedProcess(
      'simulated nodes',
      { bin: process.execPath, args: [setpointMain(), 'agent', `--kubeconfig=${api.kubeconfig}`, `--simulate=${SIM_NODES}`, '--node-name=sim', '--log-level=warn'] },
      { logFile: join(dir, 'sim.log') },
    );
    sim.start();
    procs.push(sim);
    const nodes = new ResourceClient<Obj>(rest, NODES);
    await readyNodes(nodes, SIM_NODES + 1);
    procs.push(await startScheduler(api.kubeconfig, dir));
    const pods = new ResourceClient<Obj>(rest, PODS);
    const rows: Row[] = [];
    let perPod = { cpuPct: 0, rssMiB: 0, pods: 0 };
    const quietCpu = async (): Promise<number> => {
      const a = processCost(agent.pid);
      await sleep(10_000);
      return ((processCost(agent.pid).cpuS - a.cpuS) / 10) * 100;
    };
    for (const kind of ['real processes', 'simulated'] as const) {
      for (const rate of RATES) {
        const n = kind === 'real processes' ? REAL_PODS : SIM_PODS;
        const prefix = `${kind === 'real processes' ? 'real' : 'sim'}-${rate}`;
        const spec = (i: number): Record<string, unknown> =>
          kind === 'real processes'
            ? { nodeSelector: { 'kubernetes.io/hostname': REAL_NODE }, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'local', command: ['sleep', '3600'] }] }
            : { nodeSelector: { type: 'simulated' }, containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: `${(i % 3) + 1}0m` } } }] };
        const idleCpu = kind === 'real processes' && rate === RATES[RATES.length - 1] ? await quietCpu() : 0;
        const idleRss = processCost(agent.pid).rssMiB;
        const run = new PodRun(pods, prefix);
        const rv = (await pods.list(NS, { limit: 1 })).metadata.resourceVersion ?? '';
        const watching = run.watch(rv);
        process.stderr.write(`[${program}] ${kind}: ${n} pods at ${rate}/s\n`);
        await run.create(n, rate, spec);
        const lat = await run.untilAllRunning(n);
        rows.push({ store: program, nodes: kind, rate, pods: n, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), max: lat[lat.length - 1] ?? 0, boundP50: quantile([...run.toBound].sort((a, b) => a - b), 0.5) });
        if (kind === 'real processes' && rate === RATES[RATES.length - 1]) {
          const busyCpu = await quietCpu();
          perPod = { cpuPct: (busyCpu - idleCpu) / n, rssMiB: (processCost(agent.pid).rssMiB - idleRss) / n, pods: n };
        }
        await clear(pods, prefix);
        run.stop();
        await watching;
      }
    }
    return { rows, perPod, agent: agentTimings(join(dir, 'agent.log')) };
  } finally {
    rest?.close();
    for (const p of procs.reverse()) await p.kill('SIGKILL');
    await stopAdoptedPods(agentRoot).catch(() => undefined);
    await store.destroy();
    if (KEEP) process.stderr.write(`kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const cpu = cpus();
  console.log(`bench:pods — ${new Date().toISOString()}; real-process runs of ${REAL_PODS} pods, simulated runs of ${SIM_PODS} pods on ${SIM_NODES} nodes, at ${RATES.join(' and ')} pods/s`);
  console.log(`machine: ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores; node ${process.version}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const all: Row[] = [];
  const perPod: string[] = [];
  for (const s of STORES) {
    const r = await runStore(s);
    all.push(...r.rows);
    const name = s === 'setpoint' ? "Setpoint's store" : 'etcd 3.4';
    perPod.push(`${name}: the agent costs ${r.perPod.cpuPct.toFixed(3)} % of a core and ${r.perPod.rssMiB.toFixed(2)} MiB per running pod (${r.perPod.pods} pods, quiet 10 s)`);
    if (r.agent) perPod.push(`${name}: ${r.agent}`);
  }
  const label = (s: StoreProgram): string => (s === 'setpoint' ? "Setpoint's store" : 'etcd 3.4');
  const ms = (x: number): string => x.toFixed(0);
  console.log('create → seen Running by a watch (ms); 3-member store, one setpoint apiserver, one setpoint scheduler, on one machine');
  console.log(
    markdownTable([
      ['nodes', 'pods/s', 'pods', ...STORES.flatMap((s) => [`${label(s)} p50`, `${label(s)} p99`, `${label(s)} max`, `${label(s)} bound p50`])],
      ...[...new Set(all.map((r) => `${r.nodes}|${r.rate}`))].map((k) => {
        const [nodes, rate] = k.split('|');
        const mine = STORES.map((s) => all.find((r) => r.store === s && r.nodes === nodes && String(r.rate) === rate));
        return [nodes ?? '', rate ?? '', String(mine[0]?.pods ?? ''), ...mine.flatMap((r) => (r ? [ms(r.p50), ms(r.p99), ms(r.max), ms(r.boundP50)] : ['—', '—', '—', '—']))];
      }),
    ]),
  );
  for (const l of perPod) console.log(l);
  console.log(`load average at the end ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}

await main();
