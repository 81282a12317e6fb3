// Watch fan-out: many watchers on the pods of one namespace (a RestClient, so one HTTP/2 connection, per
// `perClient` of them), then pod updates at a steady pace; each event's delivery latency runs from the
// update's answer at the writer to the event's arrival at the watcher. A warm-up update first, seen by
// every watcher, proves all streams are open before anything is timed.
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { PODS } from '../../src/client/resource-types.js';
import type { RestClient } from '../../src/client/rest-client.js';
import { waitFor } from '../../src/harness/wait.js';
import { benchPod } from './list-latency.js';
import { latencies, type Latencies } from './stats.js';

export interface FanoutResult {
  readonly watchers: number;
  /** From the update's answer at the writer (an event that beat the answer counts as 0 ms). */
  readonly delivery: Latencies;
  /** From just before the update was sent: what a watcher waits from a write, the write included. */
  readonly fromSend: Latencies;
  readonly delivered: number;
  readonly expected: number;
  /** Events that arrived before the writer had the update's answer (counted as 0 ms). */
  readonly early: number;
}

interface Arrival {
  readonly rv: string;
  readonly at: number;
}

function startWatcher(pods: ResourceClient, namespace: string, rv: string, signal: AbortSignal, arrivals: Arrival[]): void {
  void (async () => {
    for await (const ev of pods.watch(namespace, { resourceVersion: rv, signal })) {
      if (ev.type === 'MODIFIED') arrivals.push({ rv: (ev.object as KubeObject).metadata?.resourceVersion ?? '', at: performance.now() });
    }
  })().catch(() => undefined);
}

export async function watchFanout(
  makeClient: () => RestClient,
  namespace: string,
  o: { watchers: number; perClient: number; updates: number; rate: number },
): Promise<FanoutResult> {
  const writer = new ResourceClient(makeClient(), PODS);
  const target = await writer.create(benchPod(namespace, 'fanout-target'));
  const rv = target.metadata?.resourceVersion ?? '';
  const ac = new AbortController();
  // Every watch listens on the one signal.
  setMaxListeners(o.watchers + 16, ac.signal);
  const arrivals: Arrival[][] = [];
  let pods: ResourceClient | undefined;
  for (let w = 0; w < o.watchers; w++) {
    if (w % o.perClient === 0) pods = new ResourceClient(makeClient(), PODS);
    const mine: Arrival[] = [];
    arrivals.push(mine);
    startWatcher(pods as ResourceClient, namespace, rv, ac.signal, mine);
  }
  try {
    const annotate = (seq: number): Promise<KubeObject> => writer.patch(namespace, 'fanout-target', 'merge', { metadata: { annotations: { 'bench/seq': String(seq) } } });
    await annotate(-1);
    const allSeen = (): boolean => arrivals.every((a) => a.length >= 1);
    await waitFor(`${o.watchers} watchers seeing the warm-up update`, allSeen, { timeoutMs: 180_000, detail: () => `${arrivals.filter((a) => a.length >= 1).length} have` });
    const timesOf = new Map<string, { sent: number; answered: number }>();
    const t0 = performance.now();
    for (let i = 0; i < o.updates; i++) {
      const wait = t0 + (i * 1000) / o.rate - performance.now();
      if (wait > 1) await sleep(wait);
      const sent = performance.now();
      const done = await annotate(i);
      timesOf.set(done.metadata?.resourceVersion ?? '', { sent, answered: performance.now() });
    }
    const expected = o.watchers * o.updates;
    const count = (): number => arrivals.reduce((n, a) => n + a.length - 1, 0);
    await waitFor('every update delivered to every watcher', () => count() >= expected, { timeoutMs: 60_000 }).catch(() => undefined);
    const lat: number[] = [];
    const fromSend: number[] = [];
    let early = 0;
    for (const a of arrivals) {
      for (const { rv: r, at } of a) {
        const t = timesOf.get(r);
        if (t === undefined) continue;
        if (at < t.answered) early++;
        lat.push(Math.max(0, at - t.answered));
        fromSend.push(at - t.sent);
      }
    }
    // Events never delivered count as infinitely late, so a backlog cannot flatter the p99.
    while (lat.length < expected) lat.push(Number.POSITIVE_INFINITY);
    while (fromSend.length < expected) fromSend.push(Number.POSITIVE_INFINITY);
    return { watchers: o.watchers, delivery: latencies(lat), fromSend: latencies(fromSend), delivered: count(), expected, early };
  } finally {
    ac.abort();
  }
}
