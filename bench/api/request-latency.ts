// Lone requests and paced writes through the API server: ConfigMaps created, updated and read one at a
// time; then writes sent open-loop at a fixed rate, each on its own slot in time and timed from that slot,
// so a server that falls behind shows as latency, not as a lower rate.
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { CONFIGMAPS } from '../../src/client/resource-types.js';
import type { RestClient } from '../../src/client/rest-client.js';
import { latencies, type Latencies } from './stats.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const VALUE = 'x'.repeat(256);

export interface SequentialResult {
  readonly create: Latencies;
  readonly update: Latencies;
  readonly get: Latencies;
}

async function timed<T>(out: number[], f: () => Promise<T>): Promise<T> {
  const t = performance.now();
  const v = await f();
  out.push(performance.now() - t);
  return v;
}

/** `warmup` untimed rounds first: a fresh API server runs its first requests before V8 has compiled them. */
export async function sequential(rest: RestClient, namespace: string, ops: number, warmup = 50): Promise<SequentialResult> {
  const cms = new ResourceClient<ConfigMap>(rest, CONFIGMAPS);
  const cm = (name: string): ConfigMap => ({ metadata: { name, namespace }, data: { v: VALUE } });
  for (let i = 0; i < warmup; i++) {
    const made = await cms.create(cm(`warm-${i}`));
    await cms.update({ ...made, data: { v: 'y' } });
    await cms.get(namespace, `warm-${i}`);
  }
  const c: number[] = [];
  const u: number[] = [];
  const g: number[] = [];
  const made: ConfigMap[] = [];
  for (let i = 0; i < ops; i++) made.push(await timed(c, () => cms.create(cm(`seq-${i}`))));
  for (const m of made) await timed(u, () => cms.update({ ...m, data: { v: `${VALUE}-2` } }));
  for (let i = 0; i < ops; i++) await timed(g, () => cms.get(namespace, `seq-${i}`));
  return { create: latencies(c), update: latencies(u), get: latencies(g) };
}

export interface PacedResult {
  readonly rate: number;
  readonly latency: Latencies;
  /** Successful writes per second, from the first slot to the last answer. */
  readonly achieved: number;
  readonly errors: number;
}

/**
 * Creates at `rate`/s for `seconds`, round-robin over the clients. A request whose slot has passed is sent
 * at once (late), and its latency counts from the slot; failed writes are counted apart, not timed.
 */
export async function paced(clients: readonly RestClient[], namespace: string, rate: number, seconds: number, tag: string): Promise<PacedResult> {
  const cms = clients.map((c) => new ResourceClient<ConfigMap>(c, CONFIGMAPS));
  const total = Math.round(rate * seconds);
  const lat: number[] = [];
  let errors = 0;
  let lastDone = 0;
  const pending: Promise<void>[] = [];
  const t0 = performance.now() + 20;
  for (let i = 0; i < total; i++) {
    const slot = t0 + (i * 1000) / rate;
    const wait = slot - performance.now();
    if (wait > 1) await sleep(wait);
    const client = cms[i % cms.length] as ResourceClient<ConfigMap>;
    pending.push(
      client.create({ metadata: { name: `paced-${tag}-${i}`, namespace }, data: { v: VALUE } }).then(
        () => {
          lastDone = performance.now();
          lat.push(lastDone - slot);
        },
        () => void errors++,
      ),
    );
  }
  await Promise.all(pending);
  return { rate, latency: latencies(lat), achieved: lat.length / ((lastDone - t0) / 1000), errors };
}
