// bench:scheduler — throughput of the in-memory scheduling cycle (snapshot update, PreFilter, Filter
// with percentageOfNodesToScore, Score, assume) in the shape of Kubernetes' scheduler_perf
// SchedulingBasic: nodes of 4 cpu / 32Gi / 110 pods, pods requesting 100m / 500Mi. Kubernetes' CI floor
// for SchedulingBasic on 5,000 nodes is 270 pods/s. Every assumed pod is then observed bound, as the
// informer would deliver it. Sizes: BENCH_NODES, BENCH_PODS. Then the full glue path as processes
// (bench/scheduler-glue.ts): BENCH_GLUE_NODES, BENCH_GLUE_PODS; BENCH_GLUE=0 skips it.
import type { Node, Pod } from '../src/scheduler/api-types.js';
import { PodInfo } from '../src/scheduler/pod-info.js';
import { defaultProfile } from '../src/scheduler/profile.js';
import { SchedulerCache } from '../src/scheduler/scheduler-cache.js';
import { isFailure, ScheduleAlgorithm } from '../src/scheduler/schedule-pod.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { runGlue } from './scheduler-glue.js';
import type { Snapshot } from '../src/scheduler/snapshot.js';

const NODES = Number(process.env.BENCH_NODES ?? 5_000);
const PODS = Number(process.env.BENCH_PODS ?? 10_000);
const ZONES = 3;

function node(i: number): Node {
  return {
    metadata: { name: `node-${i}`, labels: { 'kubernetes.io/hostname': `node-${i}`, 'topology.kubernetes.io/zone': `zone-${i % ZONES}` } },
    spec: {},
    status: { allocatable: { cpu: '4', memory: '32Gi', pods: '110' } },
  };
}

function pod(i: number): Pod {
  return {
    metadata: { name: `pod-${i}`, namespace: 'sched-0', uid: `uid-${i}`, labels: { app: 'basic' } },
    spec: { containers: [{ name: 'pause', resources: { requests: { cpu: '100m', memory: '500Mi' } } }] },
  };
}

// A seeded tie breaker (mulberry32), so runs are comparable.
function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

function run(nodes: number, pods: number): { podsPerSec: number; p50us: number; p99us: number; failed: number; evaluated: number; maxPerNode: number; heapMB: number } {
  const cache = new SchedulerCache({ now: () => performance.now() });
  for (let i = 0; i < nodes; i++) cache.addNode(node(i));
  const alg = new ScheduleAlgorithm(defaultProfile(), rng(1));
  const infos = Array.from({ length: pods }, (_, i) => new PodInfo(pod(i)));
  const lat: number[] = [];
  let snapshot: Snapshot | undefined;
  let failed = 0;
  let evaluated = 0;
  const t0 = performance.now();
  for (const pi of infos) {
    const s = performance.now();
    snapshot = cache.updateSnapshot(snapshot);
    const r = alg.schedule(pi, snapshot);
    if (isFailure(r)) {
      failed++;
    } else {
      evaluated += r.evaluatedNodes;
      const assumed = pi.withNodeName(r.nodeName);
      cache.assumePod(assumed);
      cache.finishBinding(assumed.key);
      cache.addPod(assumed.pod);
    }
    lat.push(performance.now() - s);
  }
  const elapsed = performance.now() - t0;
  lat.sort((a, b) => a - b);
  let maxPerNode = 0;
  for (let i = 0; i < nodes; i++) maxPerNode = Math.max(maxPerNode, cache.node(`node-${i}`)?.pods.length ?? 0);
  return {
    podsPerSec: (pods / elapsed) * 1000,
    p50us: (lat[Math.floor(lat.length / 2)] ?? 0) * 1000,
    p99us: (lat[Math.floor(lat.length * 0.99)] ?? 0) * 1000,
    failed,
    evaluated: evaluated / Math.max(1, pods - failed),
    maxPerNode,
    heapMB: process.memoryUsage().heapUsed / 2 ** 20,
  };
}

// The whole loop: pods through the queue, bindings through an in-memory sink whose confirmation comes
// back as the informer's update, batches of 100 cycles between awaits.
async function runLoop(nodes: number, pods: number): Promise<{ podsPerSec: number; bound: number }> {
  let bound = 0;
  const s: Scheduler = new Scheduler({
    profile: defaultProfile(),
    now: () => performance.now(),
    randInt: rng(2),
    sink: {
      bind: async (p, n) => {
        bound++;
        s.onPodUpdate(p, { ...p, spec: { ...p.spec, nodeName: n } });
      },
      unschedulable: async () => {},
    },
  });
  for (let i = 0; i < nodes; i++) s.onNodeAdd(node(i));
  const t0 = performance.now();
  for (let i = 0; i < pods; i++) s.onPodAdd(pod(i));
  for (;;) {
    let n = 0;
    while (n < 100 && s.scheduleOne()) n++;
    await s.idle();
    if (n === 0) break;
  }
  return { podsPerSec: (pods / (performance.now() - t0)) * 1000, bound };
}

// Warm up the JIT on a small cluster first.
run(500, 2_000);
const rows: string[][] = [];
for (const [n, p] of [[NODES, PODS], [1_000, 10_000], [100, 5_000]] as const) {
  const r = run(n, p);
  rows.push([String(n), String(p), r.podsPerSec.toFixed(0), r.p50us.toFixed(0), r.p99us.toFixed(0), r.evaluated.toFixed(0), String(r.maxPerNode), String(r.failed), r.heapMB.toFixed(0)]);
}
const head = ['nodes', 'pods', 'pods/s', 'p50 µs', 'p99 µs', 'nodes filtered/pod', 'max pods/node', 'unschedulable', 'heap MB'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (cells: readonly string[]): string => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
console.log('scheduler cycle, SchedulingBasic shape (Kubernetes CI floor 270 pods/s at 5,000 nodes; target 1,000)');
console.log(line(head));
for (const r of rows) console.log(line(r));
const loop = await runLoop(NODES, PODS);
console.log(`\nfull loop (queue, cycle, assume, bind via sink, informer confirm) on ${NODES} nodes: ${loop.podsPerSec.toFixed(0)} pods/s, ${loop.bound}/${PODS} bound`);

if (process.env.BENCH_GLUE !== '0') {
  const g = await runGlue(Number(process.env.BENCH_GLUE_NODES ?? 100), Number(process.env.BENCH_GLUE_PODS ?? 1_000));
  console.log(
    `full glue path (setpoint scheduler process → pods/binding → setpoint apiserver → etcd 3.4, watched back) on ${g.nodes} nodes: ${g.podsPerSec.toFixed(0)} pods/s, ${g.pods} pods in ${g.seconds.toFixed(2)} s from caches synced; scheduler RSS ${g.schedulerRssMB.toFixed(0)} MB`,
  );
}
