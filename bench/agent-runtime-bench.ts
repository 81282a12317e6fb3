// bench (agent runtime): pod startup latency on real processes, from syncPod to the container running,
// p50/p99, for N pods handed in at a given rate, and the agent's own CPU and memory per running pod.
// No API server: this is the runtime alone (`npm run bench:pods` with the API glue comes later).
// Env: PODS (default 100), RATE pods/s (default 10).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodRuntime } from '../src/agent/pod-runtime.js';
import type { Pod } from '../src/agent/pod-types.js';

const PODS = Number(process.env.PODS ?? 100);
const RATE = Number(process.env.RATE ?? 10);
const root = mkdtempSync(join(tmpdir(), 'setpoint-agent-bench-'));
const rt = new PodRuntime({
  root,
  node: { nodeName: 'bench', hostIP: '127.0.0.1', allocatable: { cpu: '2', memory: '4Gi' } },
  inputs: { configMap: () => Promise.resolve(undefined), secret: () => Promise.resolve(undefined) },
});
rt.start();
const created = new Map<string, number>();
const latency: number[] = [];
rt.on('status', (uid) => {
  const t0 = created.get(uid);
  if (t0 === undefined) return;
  if (rt.status(uid)?.containerStatuses?.[0]?.state.running) {
    latency.push(performance.now() - t0);
    created.delete(uid);
  }
});
const mem0 = process.memoryUsage().rss;
const cpu0 = process.cpuUsage();
for (let i = 0; i < PODS; i++) {
  const pod: Pod = { metadata: { name: `p${i}`, namespace: 'default', uid: `bench-${i}` }, spec: { containers: [{ name: 'app', command: ['sleep', '1000'] }] } };
  created.set(`bench-${i}`, performance.now());
  rt.syncPod(pod);
  await new Promise((r) => setTimeout(r, 1000 / RATE));
}
while (latency.length < PODS) await new Promise((r) => setTimeout(r, 50));
const cpuStart = process.cpuUsage();
const idleMs = 5000;
await new Promise((r) => setTimeout(r, idleMs));
const idle = process.cpuUsage(cpuStart);
const cpu = process.cpuUsage(cpu0);
const mem1 = process.memoryUsage().rss;
latency.sort((a, b) => a - b);
const q = (p: number): string => (latency[Math.min(latency.length - 1, Math.floor(p * latency.length))] ?? 0).toFixed(1);
console.log(`pods ${PODS} at ${RATE}/s  startup p50 ${q(0.5)} ms  p99 ${q(0.99)} ms  max ${q(1)} ms`);
console.log(`agent rss +${((mem1 - mem0) / 1024 / PODS).toFixed(0)} KiB/pod  cpu during start ${((cpu.user + cpu.system) / 1000 / PODS).toFixed(1)} ms/pod  idle cpu ${(((idle.user + idle.system) / 1000 / idleMs) * 100 / PODS).toFixed(3)} %/pod`);
await rt.close({ killPods: true, graceSeconds: 0 });
rmSync(root, { recursive: true, force: true });
