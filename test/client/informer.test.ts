// Shared informers against a real API server on a real etcd 3.4: the first list fills the cache and
// handlers hear of it, watch events keep it current, the indexes follow changes, and a 410 from the
// watch relists, reporting objects that vanished meanwhile as deleted with their final state unknown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSelector } from '../../src/api/labels-selector.js';
import { NODE_INDEX, nodeNameIndexFunc } from '../../src/client/indexer.js';
import { SharedInformerFactory } from '../../src/client/informer-factory.js';
import { deletedObject, Informer, isDeletedFinalStateUnknown } from '../../src/client/informer.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient, type WatchOptions } from '../../src/client/resource-client.js';
import { PODS } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import type { WatchEvent } from '../../src/client/watch-decoder.js';
import { waitFor } from '../../src/harness/wait.js';
import { startRegistryServer, type RegistryServer } from '../apiserver/registry/registry-server.js';

const pod = (name: string, labels: Record<string, string> = {}, nodeName?: string): KubeObject => ({
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'c', image: 'x' }], ...(nodeName ? { nodeName } : {}) },
});

describe('SharedInformer', () => {
  let s: RegistryServer;
  let rest: RestClient;
  let pods: ResourceClient;
  beforeAll(async () => {
    s = await startRegistryServer('etcd');
    rest = new RestClient({ server: s.ts.url, tls: { ca: s.ts.ca.certPem, cert: s.ts.admin.certPem, key: s.ts.admin.keyPem } });
    pods = new ResourceClient(rest, PODS);
  });
  afterAll(async () => {
    rest?.close();
    await s?.stop();
  });

  it('lists, then follows adds, updates and deletes, with indexes and selectors', async () => {
    await pods.create(pod('a', { app: 'web' }, 'n1'));
    const factory = new SharedInformerFactory(rest);
    const inf = factory.informerFor(PODS, { indexers: { [NODE_INDEX]: nodeNameIndexFunc } });
    const seen: string[] = [];
    inf.addEventHandler({
      onAdd: (o, initial) => seen.push(`add ${o.metadata?.name} ${initial}`),
      onUpdate: (o, n) => seen.push(`update ${n.metadata?.name} ${o.metadata?.labels?.app ?? ''}->${n.metadata?.labels?.app ?? ''}`),
      onDelete: (o) => seen.push(`delete ${deletedObject(o).metadata?.name}`),
    });
    const ac = new AbortController();
    factory.start(ac.signal);
    try {
      expect(await factory.waitForCacheSync(ac.signal)).toBe(true);
      expect(seen).toEqual(['add a true']);
      await pods.create(pod('b', { app: 'db' }));
      await pods.patch('default', 'a', 'merge', { metadata: { labels: { app: 'web2' } } });
      await pods.delete('default', 'b', { gracePeriodSeconds: 0 });
      await waitFor('informer events', () => seen.length >= 4, { timeoutMs: 20_000 });
      expect(seen).toEqual(['add a true', 'add b false', 'update a web->web2', 'delete b']);
      expect(inf.lister.list('default').map((o) => o.metadata?.name)).toEqual(['a']);
      expect(inf.lister.list('', parseSelector('app=web2')).map((o) => o.metadata?.name)).toEqual(['a']);
      expect(inf.lister.byIndex(NODE_INDEX, 'n1').map((o) => o.metadata?.name)).toEqual(['a']);
      expect(inf.lister.get('default', 'a')?.metadata?.labels).toEqual({ app: 'web2' });
      // A late handler first hears of what is already cached.
      const late: string[] = [];
      inf.addEventHandler({ onAdd: (o, initial) => late.push(`${o.metadata?.name} ${initial}`) });
      expect(late).toEqual(['a true']);
    } finally {
      ac.abort();
      await factory.stopped();
    }
  }, 60_000);

  it('relists after a 410 and reports what vanished meanwhile as deleted, final state unknown', async () => {
    await pods.create(pod('gone-soon'));
    // The server's watch answers a 410 ERROR event once (as when the watch fell behind compaction); the
    // object is deleted behind the informer's back before it relists.
    class ExpiringOnce extends ResourceClient {
      private expired = false;
      override watch(namespace: string, o: WatchOptions): AsyncGenerator<WatchEvent<KubeObject>> {
        if (this.expired) return super.watch(namespace, o);
        this.expired = true;
        const api = pods;
        return (async function* () {
          await api.delete('default', 'gone-soon', { gracePeriodSeconds: 0 });
          yield { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } as KubeObject } satisfies WatchEvent<KubeObject>;
        })();
      }
    }
    const inf = new Informer(new ExpiringOnce(rest, PODS));
    const deleted: unknown[] = [];
    inf.addEventHandler({ onDelete: (o) => deleted.push(o) });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    try {
      await waitFor('the relist', () => deleted.length > 0, { timeoutMs: 20_000 });
      expect(isDeletedFinalStateUnknown(deleted[0])).toBe(true);
      expect(deletedObject(deleted[0] as KubeObject).metadata?.name).toBe('gone-soon');
      expect(inf.lister.get('default', 'gone-soon')).toBeUndefined();
    } finally {
      ac.abort();
      await run;
    }
  }, 60_000);
});
