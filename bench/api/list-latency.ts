// Many pods stored through the API server, then LISTed whole: from the API server's watch cache
// (resourceVersion=0) and consistent (no resourceVersion: a quorum read of the store). Each LIST is timed
// to its last byte; the JSON is not parsed by the bench (that is the client's cost, not the server's).
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { PODS } from '../../src/client/resource-types.js';
import type { RestClient } from '../../src/client/rest-client.js';
import { forEachConcurrently } from './api-side.js';
import { latencies, type Latencies } from './stats.js';

/** A pod as a workload controller writes one: labels, an owner-like annotation, one container with requests. */
export function benchPod(namespace: string, name: string): KubeObject {
  return {
    metadata: { name, namespace, labels: { app: 'bench', tier: 'api' }, annotations: { 'bench/seq': '0' } },
    spec: { containers: [{ name: 'app', image: 'registry.invalid/bench:1', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
  } as KubeObject;
}

/** Creates `n` pods, 64 in flight spread over the clients; returns pods/s. */
export async function seedPods(clients: readonly RestClient[], namespace: string, n: number): Promise<number> {
  const pods = clients.map((c) => new ResourceClient(c, PODS));
  const t = performance.now();
  await forEachConcurrently(n, 64, (i) => (pods[i % pods.length] as ResourceClient).create(benchPod(namespace, `pod-${i}`)));
  return n / ((performance.now() - t) / 1000);
}

export interface ListResult {
  readonly cache: Latencies;
  readonly consistent: Latencies;
  /** Items in one LIST (checked, so a short list cannot pass as fast). */
  readonly items: number;
  readonly bytes: number;
}

async function timeList(rest: RestClient, path: string, query: Record<string, string>, expected: number): Promise<{ ms: number; bytes: number }> {
  const t = performance.now();
  const r = await rest.raw({ path, query, timeoutMs: 120_000 });
  const ms = performance.now() - t;
  if (r.status !== 200) throw new Error(`LIST ${path} answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
  // Counting uids (one per pod, none in the list's own metadata) is cheaper than parsing 30 MiB, and tells a
  // short list from a full one.
  const items = r.body.toString('latin1').split('"uid":"').length - 1;
  if (items < expected) throw new Error(`LIST ${path} returned ${items} pods, ${expected} were stored`);
  return { ms, bytes: r.body.length };
}

export async function listPods(rest: RestClient, namespace: string, expected: number, runs: number): Promise<ListResult> {
  const path = new ResourceClient(rest, PODS).path(namespace);
  // One untimed LIST of each kind first: the first fills buffers and compiles the path.
  await timeList(rest, path, { resourceVersion: '0' }, expected);
  await timeList(rest, path, {}, expected);
  const cache: number[] = [];
  const consistent: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    cache.push((await timeList(rest, path, { resourceVersion: '0' }, expected)).ms);
    const c = await timeList(rest, path, {}, expected);
    consistent.push(c.ms);
    bytes = c.bytes;
  }
  return { cache: latencies(cache), consistent: latencies(consistent), items: expected, bytes };
}
