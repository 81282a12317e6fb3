// Two of issue 26's acceptance checks, with real processes on both stores (etcd 3.4 and Setpoint's):
// - sixteen clients increment one annotation with resourceVersion preconditions and retry on 409: the final
//   value equals the number of updates that succeeded (no lost update, none counted twice);
// - the API server is SIGKILLed while writers update an object: after a restart on the same port no object is
//   partial, and a watcher that resumes from its last resourceVersion sees every value exactly once, in order.
import { mkdtempSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConflict } from '../../../src/client/api-status-error.js';
import type { KubeObject } from '../../../src/client/kube-object.js';
import { ResourceClient } from '../../../src/client/resource-client.js';
import { CONFIGMAPS } from '../../../src/client/resource-types.js';
import { RestClient } from '../../../src/client/rest-client.js';
import { startApiServerProcess, type ApiServerProcess } from '../../../src/harness/apiserver-process.js';
import { waitFor } from '../../../src/harness/wait.js';
import { STORE_KINDS, StoreTestCluster } from '../../etcd-client/helpers/store-cluster.js';

const ANNOTATION = 'setpoint.test/count';
const countOf = (o: KubeObject): number => Number(o.metadata?.annotations?.[ANNOTATION] ?? 'NaN');

/** Updates whose answer was lost (the connection died): they may have landed. */
let ambiguous = 0;

/** Reads, increments, writes with the read's resourceVersion; retries on 409 and on a lost connection. */
async function increment(cms: ResourceClient, name: string, stop: () => boolean): Promise<boolean> {
  while (!stop()) {
    let cur: KubeObject;
    try {
      cur = await cms.get('default', name);
    } catch {
      await sleep(50); // the server is down or restarting: ask again
      continue;
    }
    const next = { ...cur, metadata: { ...cur.metadata, annotations: { [ANNOTATION]: String(countOf(cur) + 1) } } };
    try {
      await cms.update(next);
      return true;
    } catch (e) {
      if (isConflict(e)) continue;
      // An update whose answer was lost may have landed; the next read tells, and a stale resourceVersion
      // then gets 409: nothing is applied twice.
      ambiguous++;
      continue;
    }
  }
  return false;
}

describe.each(STORE_KINDS)('the API server on %s', (kind) => {
  let dir: string;
  let store: StoreTestCluster;
  let api: ApiServerProcess;
  let rest: RestClient;
  let second: ApiServerProcess | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'api-concurrency-'));
    store = await StoreTestCluster.start(kind);
    api = await startApiServerProcess({ dir, etcdServers: store.endpoints() });
    rest = new RestClient({ ...api.clientConfig, timeoutMs: 5000 });
  }, 120_000);
  afterAll(async () => {
    rest?.close();
    await second?.stop();
    await api?.stop();
    await store?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sixteen clients incrementing one annotation: the final value is the number of successful updates', async () => {
    const cms = new ResourceClient(rest, CONFIGMAPS);
    await cms.create({ metadata: { name: 'counter', namespace: 'default', annotations: { [ANNOTATION]: '0' } } });
    const clients = Array.from({ length: 16 }, () => new RestClient(api.clientConfig));
    try {
      const perClient = 5;
      const done = await Promise.all(
        clients.map(async (c) => {
          const mine = new ResourceClient(c, CONFIGMAPS);
          let ok = 0;
          for (let i = 0; i < perClient; i++) if (await increment(mine, 'counter', () => false)) ok++;
          return ok;
        }),
      );
      const successes = done.reduce((a, b) => a + b, 0);
      expect(successes).toBe(16 * perClient);
      expect(countOf(await cms.get('default', 'counter'))).toBe(successes);
    } finally {
      for (const c of clients) c.close();
    }
  }, 120_000);

  it('SIGKILL under load: no partial object, and a resumed watch sees every value once, in order', async () => {
    const cms = new ResourceClient(rest, CONFIGMAPS);
    const created = await cms.create({ metadata: { name: 'crash', namespace: 'default', annotations: { [ANNOTATION]: '0' } }, data: { payload: 'x'.repeat(4096) } });
    // A second API server on the same store, as in any HA control plane: the watcher starts on the first and,
    // when its stream ends, resumes from its last resourceVersion on the other. (A restarted API server's
    // watch cache starts at the store's current revision, so a watcher resuming there from an older one gets
    // a 410 and relists, as in Kubernetes.)
    second = await startApiServerProcess({ dir, name: 'apiserver-2', etcdServers: store.endpoints() });
    const secondRest = new RestClient({ ...second.clientConfig, timeoutMs: 5000 });
    const watchVia = [cms, new ResourceClient(secondRest, CONFIGMAPS)];
    let via = 0;
    const seen: number[] = [];
    let lastRv = created.metadata?.resourceVersion ?? '';
    const ac = new AbortController();
    const watcher = (async () => {
      while (!ac.signal.aborted) {
        try {
          for await (const ev of watchVia[via % 2]!.watch('default', { fieldSelector: 'metadata.name=crash', resourceVersion: lastRv, signal: ac.signal })) {
            if (ev.type === 'MODIFIED') seen.push(countOf(ev.object));
            lastRv = ev.object.metadata?.resourceVersion ?? lastRv;
          }
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
        via++;
      }
    })();
    let stop = false;
    let successes = 0;
    ambiguous = 0;
    const writers = Array.from({ length: 4 }, async () => {
      while (!stop) if (await increment(cms, 'crash', () => stop)) successes++;
    });
    try {
      await waitFor('updates before the kill', () => successes >= 20);
      await api.stop('SIGKILL');
      const before = successes;
      api = await startApiServerProcess({ dir, etcdServers: store.endpoints(), port: api.port });
      await waitFor('updates after the restart', () => successes >= before + 20, { timeoutMs: 60_000 });
    } finally {
      stop = true;
      await Promise.all(writers);
    }
    const final = await cms.get('default', 'crash');
    // Whole objects only: every field as written.
    expect(final.data).toEqual({ payload: 'x'.repeat(4096) });
    // Every acknowledged update landed; of those whose answer the kill lost, some may have too.
    const total = countOf(final);
    expect(total).toBeGreaterThanOrEqual(successes);
    expect(total).toBeLessThanOrEqual(successes + ambiguous);
    await waitFor('the watcher to catch up', () => seen.at(-1) === total, { timeoutMs: 30_000, detail: () => `last seen ${seen.at(-1)}, want ${total}` });
    ac.abort();
    await watcher;
    secondRest.close();
    expect(seen).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  }, 180_000);
});
