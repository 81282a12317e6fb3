// Watches as a controller process holds them, against a real `setpoint apiserver` on etcd 3.4: every watch
// of a client shares one HTTP/2 connection, so a watch whose consumer stops reading must not hold back
// another one (nor the writes) on it; and an informer's cache stays exactly the server's state across
// watches the server ends (their timeout) and a watch that breaks (its API server killed, objects changed
// through another API server meanwhile, then the first restarted on its port). Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deletedObject, Informer } from '../../src/client/informer.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient, type WatchOptions } from '../../src/client/resource-client.js';
import { CONFIGMAPS } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import type { WatchEvent } from '../../src/client/watch-decoder.js';
import { startApiServerProcess, type ApiServerProcess } from '../../src/harness/apiserver-process.js';
import { waitFor } from '../../src/harness/wait.js';
import { StoreTestCluster } from '../etcd-client/helpers/store-cluster.js';

const NS = 'default';

const configMap = (name: string, set: string, data: Record<string, string> = {}): KubeObject & { data: Record<string, string> } => ({
  metadata: { name, namespace: NS, labels: { set } },
  data,
});

/** Counts the watches it opens. */
class CountingClient extends ResourceClient {
  watches = 0;
  override watch(namespace: string, o: WatchOptions): AsyncGenerator<WatchEvent<KubeObject>> {
    this.watches++;
    return super.watch(namespace, o);
  }
}

/** name → resourceVersion, sorted, of a set of objects: what "the same state" means here. */
function versions(objs: readonly KubeObject[]): string {
  return objs
    .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
    .sort()
    .join(' ');
}

describe('watches sharing one connection, and informers across ended and broken watches', () => {
  let dir: string;
  let store: StoreTestCluster;
  let api: ApiServerProcess;
  let other: ApiServerProcess;
  let rest: RestClient;
  let otherRest: RestClient;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'watch-streams-'));
    store = await StoreTestCluster.start('etcd');
    api = await startApiServerProcess({ dir, etcdServers: store.endpoints() });
    other = await startApiServerProcess({ dir, name: 'apiserver-2', etcdServers: store.endpoints() });
    // h2 only: the point is one connection under every watch and write of the client.
    rest = new RestClient({ ...api.clientConfig, protocol: 'h2' });
    otherRest = new RestClient(other.clientConfig);
  }, 120_000);
  afterAll(async () => {
    rest?.close();
    otherRest?.close();
    await api?.stop();
    await other?.stop();
    await store?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a watch whose consumer stops reading holds back neither another watch nor the writes on the connection', async () => {
    const cms = new ResourceClient(rest, CONFIGMAPS);
    const from = (await cms.list(NS, { limit: 1 })).metadata.resourceVersion ?? '';
    const ac = new AbortController();
    try {
      // Reads its first event, then nothing more: ~7 MiB come for it, past its HTTP/2 window and any buffer.
      const stalled = cms.watch(NS, { labelSelector: 'set=stalled', resourceVersion: from, signal: ac.signal });
      const first = stalled.next();
      const live = new Set<string>();
      const following = (async () => {
        for await (const ev of cms.watch(NS, { labelSelector: 'set=live', resourceVersion: from, signal: ac.signal })) if (ev.type === 'ADDED') live.add(ev.object.metadata?.name ?? '');
      })();
      const n = 300;
      const big = 'x'.repeat(24 * 1024);
      for (let i = 0; i < n; i += 10) {
        await Promise.all(
          Array.from({ length: 10 }, async (_, j) => {
            await cms.create(configMap(`stalled-${i + j}`, 'stalled', { big }));
            await cms.create(configMap(`live-${i + j}`, 'live'));
          }),
        );
      }
      await waitFor('every event on the watch that reads', () => live.size === n, { timeoutMs: 30_000, detail: () => `${live.size} of ${n} seen` });
      expect((await first).value?.object.metadata?.name).toMatch(/^stalled-/);
      ac.abort();
      await following;
    } finally {
      ac.abort();
    }
  }, 120_000);

  it('an informer keeps an exact cache across watches the server ends', async () => {
    const cms = new ResourceClient(rest, CONFIGMAPS);
    const watching = new CountingClient(rest, CONFIGMAPS);
    // Each watch asks the server to end it after 1–2 s.
    const inf = new Informer(watching, { namespace: NS, labelSelector: 'set=timeouts', minWatchTimeoutSeconds: 1 });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    try {
      expect(await inf.waitForSync(ac.signal)).toBe(true);
      // Creates, updates and deletes until the server has ended at least four of the informer's watches.
      for (let i = 0; watching.watches < 5 || i < 30; i++) {
        await cms.create(configMap(`t-${i}`, 'timeouts', { v: '0' }));
        if (i >= 1) await cms.patch(NS, `t-${i - 1}`, 'merge', { data: { v: '1' } });
        if (i >= 2 && i % 3 === 0) await cms.delete(NS, `t-${i - 2}`);
      }
      const want = versions((await cms.listAll(NS, { labelSelector: 'set=timeouts' })).items);
      await waitFor('the cache to hold the server state', () => versions(inf.lister.list(NS)) === want, { timeoutMs: 30_000, detail: () => versions(inf.lister.list(NS)) });
      expect(watching.watches).toBeGreaterThanOrEqual(5);
    } finally {
      ac.abort();
      await running;
    }
  }, 120_000);

  it('an informer whose watch breaks (its API server killed) relists the changes it missed, deletions included', async () => {
    const cms = new ResourceClient(rest, CONFIGMAPS);
    const elsewhere = new ResourceClient(otherRest, CONFIGMAPS);
    for (let i = 0; i < 10; i++) await cms.create(configMap(`k-${i}`, 'kill', { v: '0' }));
    const inf = new Informer(new ResourceClient(rest, CONFIGMAPS), { namespace: NS, labelSelector: 'set=kill' });
    const deleted: string[] = [];
    inf.addEventHandler({ onDelete: (o) => deleted.push(deletedObject(o).metadata?.name ?? '') });
    const ac = new AbortController();
    const running = inf.run(ac.signal);
    try {
      expect(await inf.waitForSync(ac.signal)).toBe(true);
      await cms.patch(NS, 'k-0', 'merge', { data: { v: '1' } });
      await waitFor('the first update', () => (inf.lister.get(NS, 'k-0') as { data?: { v?: string } } | undefined)?.data?.v === '1');
      await api.stop('SIGKILL');
      // Meanwhile, through the other API server: an update, two deletes, a create.
      await elsewhere.patch(NS, 'k-1', 'merge', { data: { v: '1' } });
      await elsewhere.delete(NS, 'k-2');
      await elsewhere.delete(NS, 'k-3');
      await elsewhere.create(configMap('k-new', 'kill'));
      api = await startApiServerProcess({ dir, etcdServers: store.endpoints(), port: api.port });
      await elsewhere.patch(NS, 'k-4', 'merge', { data: { v: '1' } });
      const want = versions((await elsewhere.listAll(NS, { labelSelector: 'set=kill' })).items);
      await waitFor('the cache to hold the server state', () => versions(inf.lister.list(NS)) === want, { timeoutMs: 60_000, detail: () => versions(inf.lister.list(NS)) });
      expect(deleted.sort()).toEqual(['k-2', 'k-3']);
    } finally {
      ac.abort();
      await running;
    }
  }, 180_000);
});
