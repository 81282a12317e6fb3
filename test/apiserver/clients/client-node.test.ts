// @kubernetes/client-node 1.4 (the version that runs on Node 20) against a real `setpoint apiserver`
// process on a real etcd 3.4: list, watch, create with bodies that carry neither kind nor apiVersion,
// patch, delete, and an informer that survives a 410 by relisting. For the 410 the server runs with the
// watch cache off (`--watch-cache=false`, watches go to the store), short watches (`--min-request-timeout=2`)
// and a compaction every second: the informer's re-watch from its last resourceVersion lands below the
// store's compacted revision, gets the 410 ERROR event, and client-node lists again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServerProcess, type ApiServerProcess } from '../../../src/harness/apiserver-process.js';
import { waitFor } from '../../../src/harness/wait.js';
import { StoreTestCluster } from '../../etcd-client/helpers/store-cluster.js';

const pod = (name: string): k8s.V1Pod => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

describe('@kubernetes/client-node 1.4', () => {
  let dir: string;
  let etcd: StoreTestCluster;
  let api: ApiServerProcess;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'client-node-'));
    etcd = await StoreTestCluster.start('etcd');
    api = await startApiServerProcess({
      dir,
      etcdServers: etcd.endpoints(),
      flags: ['--watch-cache=false', '--min-request-timeout=2', '--etcd-compaction-interval=1s'],
    });
    kc = new k8s.KubeConfig();
    kc.loadFromFile(api.kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'cn' } } });
    await core.createNamespace({ body: { metadata: { name: 'other' } } });
  }, 120_000);
  afterAll(async () => {
    await api?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('creates without kind or apiVersion, lists, patches and deletes', async () => {
    const created = await core.createNamespacedPod({ namespace: 'cn', body: pod('a') });
    expect([created.kind, created.apiVersion, created.metadata?.name, created.spec?.restartPolicy]).toEqual(['Pod', 'v1', 'a', 'Always']);
    const list = await core.listNamespacedPod({ namespace: 'cn' });
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['a']);
    // client-node's default patch type is JSON patch; a merge patch needs its content type set.
    const jp = await core.patchNamespacedPod({ namespace: 'cn', name: 'a', body: [{ op: 'add', path: '/metadata/labels', value: { app: 'x' } }] });
    expect(jp.metadata?.labels).toEqual({ app: 'x' });
    const mp = await core.patchNamespacedPod(
      { namespace: 'cn', name: 'a', body: { metadata: { labels: { tier: 'web' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    expect(mp.metadata?.labels).toEqual({ app: 'x', tier: 'web' });
    const err = await core.readNamespacedPod({ namespace: 'cn', name: 'missing' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(k8s.ApiException);
    expect((err as k8s.ApiException<string>).code).toBe(404);
    expect(JSON.parse((err as k8s.ApiException<string>).body as string)).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'pods "missing" not found' });
    await core.deleteNamespacedPod({ namespace: 'cn', name: 'a', gracePeriodSeconds: 0 });
    await waitFor('pod a gone', async () => (await core.listNamespacedPod({ namespace: 'cn' })).items.length === 0);
  }, 60_000);

  it('watches', async () => {
    const events: string[] = [];
    const w = new k8s.Watch(kc);
    const list = await core.listNamespacedPod({ namespace: 'cn' });
    const req = await w.watch(
      '/api/v1/namespaces/cn/pods',
      { resourceVersion: list.metadata?.resourceVersion },
      (type: string, obj: k8s.V1Pod) => events.push(`${type} ${obj.metadata?.name}`),
      () => {},
    );
    try {
      await core.createNamespacedPod({ namespace: 'cn', body: pod('w') });
      await core.deleteNamespacedPod({ namespace: 'cn', name: 'w', gracePeriodSeconds: 0 });
      await waitFor('watch events', () => events.includes('DELETED w'));
      expect(events.filter((e) => e.endsWith(' w'))).toEqual(['ADDED w', 'DELETED w']);
    } finally {
      req.abort();
    }
  }, 60_000);

  it('keeps an informer current across a 410 by relisting', async () => {
    let lists = 0;
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/cn/pods', () => {
      lists++;
      return core.listNamespacedPod({ namespace: 'cn' });
    });
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    try {
      await core.createNamespacedPod({ namespace: 'cn', body: pod('i1') });
      await waitFor('i1 in the informer', () => informer.get('i1', 'cn') !== undefined);
      // Writes elsewhere move the store on; compaction (every second) passes the informer's resourceVersion.
      for (let i = 0; i < 5; i++) await core.createNamespacedPod({ namespace: 'other', body: pod(`o${i}`) });
      await waitFor('a relist after the 410', () => lists >= 2, { timeoutMs: 30_000 });
      await core.createNamespacedPod({ namespace: 'cn', body: pod('i2') });
      await waitFor('i2 in the informer', () => informer.get('i2', 'cn') !== undefined, { timeoutMs: 30_000 });
      expect(informer.list('cn').map((p) => p.metadata?.name).sort()).toEqual(['i1', 'i2']);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  }, 90_000);
});
