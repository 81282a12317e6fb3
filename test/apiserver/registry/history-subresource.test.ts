// NAME/history: the registry serves each object's admission history (docs/why-records.md) for every kind,
// as a HistoryRecordList; 404 with a Status when there is none; read-only; listed in discovery as Setpoint's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundEntries } from '../../../src/apiserver/registry/history-subresource.js';
import { HISTORY_LIMIT } from '../../../src/apiserver/registry/history.js';
import { json } from '../helpers/clients.js';
import { startRegistryServer, type RegistryServer } from './registry-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const pod = (name: string, image = 'busybox:1.36'): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image }] },
});

describe('the history subresource', () => {
  let s: RegistryServer;
  beforeAll(async () => {
    s = await startRegistryServer('etcd');
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('serves a pod’s history as stored, newest last, gone with the pod', async () => {
    const ns = await s.namespace();
    expect((await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('h'))).status).toBe(201);
    const patched = await s.call('PATCH', `/api/v1/namespaces/${ns}/pods/h`, { metadata: { labels: { x: 'y' } } }, { 'content-type': 'application/merge-patch+json' });
    expect(patched.status, patched.body).toBe(200);
    const r = await s.call('GET', `/api/v1/namespaces/${ns}/pods/h/history`);
    expect(r.status, r.body).toBe(200);
    const list = json<Obj>(r);
    expect(list).toMatchObject({ apiVersion: 'setpoint.io/v1', kind: 'HistoryRecordList', metadata: { name: 'h', namespace: ns } });
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
    const stored = JSON.parse((await s.client.get(`/registry/setpoint.io/history/pods/${ns}/h`))?.value.toString() ?? '{}') as Obj;
    expect(list.items).toEqual(stored.entries);
    expect(list.items.map((e: Obj) => e.operation)).toEqual(['CREATE', 'UPDATE']);
    expect(list.items[0].records[0]).toMatchObject({ stage: 'defaulting', plugin: 'defaults', allowed: true });

    expect((await s.call('DELETE', `/api/v1/namespaces/${ns}/pods/h`)).status).toBe(200);
    const gone = await s.call('GET', `/api/v1/namespaces/${ns}/pods/h/history`);
    expect(gone.status).toBe(404);
  });

  it('answers 404 NotFound with a Status when nothing was recorded', async () => {
    const r = await s.call('GET', '/api/v1/namespaces/default/configmaps/never-made/history');
    expect(r.status).toBe(404);
    expect(json(r)).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'NotFound',
      code: 404,
      message: 'configmaps "never-made" has no history',
      details: { name: 'never-made', kind: 'configmaps' },
    });
  });

  it('is the same generic subresource on every kind: cluster-scoped, other groups', async () => {
    const ns = await s.namespace();
    const nsHistory = await s.call('GET', `/api/v1/namespaces/${ns}/history`);
    expect(nsHistory.status, nsHistory.body).toBe(200);
    expect(json<Obj>(nsHistory)).toMatchObject({ kind: 'HistoryRecordList', metadata: { name: ns }, items: [{ operation: 'CREATE', allowed: true }] });
    expect(json<Obj>(nsHistory).metadata.namespace).toBeUndefined();

    const lease = { metadata: { name: 'l' }, spec: { holderIdentity: 'me' } };
    expect((await s.call('POST', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, lease)).status).toBe(201);
    const leaseHistory = await s.call('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/l/history`);
    expect(leaseHistory.status, leaseHistory.body).toBe(200);
    expect(json<Obj>(leaseHistory).items).toHaveLength(1);
  });

  it('serves the refusal of a create, though the object never existed', async () => {
    const ns = await s.namespace();
    const refused = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('bad', ''));
    expect(refused.status).toBe(422);
    const r = await s.call('GET', `/api/v1/namespaces/${ns}/pods/bad/history`);
    expect(r.status, r.body).toBe(200);
    expect(json<Obj>(r).items).toMatchObject([{ operation: 'CREATE', allowed: false, message: json<Obj>(refused).message }]);
  });

  it('is read-only', async () => {
    const ns = await s.namespace();
    const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods/x/history`, { entries: [] });
    expect(r.status).toBe(405);
    expect(json(r)).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed' });
  });

  it('is listed in discovery as Setpoint’s own kind, and kubectl api-resources ignores it', async () => {
    const core = json<Obj>(await s.call('GET', '/api/v1'));
    expect(core.resources.find((r: Obj) => r.name === 'pods/history')).toEqual({
      name: 'pods/history',
      singularName: '',
      namespaced: true,
      group: 'setpoint.io',
      version: 'v1',
      kind: 'HistoryRecordList',
      verbs: ['get'],
    });
    const out = await s.kubectl('api-resources', '--no-headers', '-o', 'name');
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).not.toContain('history');
    expect(out.stdout.split('\n')).toContain('pods');
  });
});

describe('boundEntries', () => {
  it('keeps the newest entries that fit, at most HISTORY_LIMIT', () => {
    const many = Array.from({ length: HISTORY_LIMIT + 5 }, (_, i) => ({ i }));
    expect(boundEntries(many).map((e) => (e as { i: number }).i)).toEqual(many.slice(-HISTORY_LIMIT).map((e) => e.i));
    const big = [{ m: 'a'.repeat(100) }, { m: 'b'.repeat(100) }, { m: 'c' }];
    expect(boundEntries(big, 120)).toEqual([{ m: 'b'.repeat(100) }, { m: 'c' }]);
    expect(boundEntries([{ m: 'x'.repeat(200) }], 120)).toEqual([]);
  });
});
