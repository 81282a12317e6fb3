// NAME/reconcile: the loops' records (docs/why-records.md) — one per (object, controller), since/count kept
// by the server, bounded per record and per object, refused for objects that do not exist, gone with the
// object, refused to node agents.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeNode } from '../../../src/apiserver/authz/node-authorizer.js';
import { authenticatedUser } from '../../../src/apiserver/authn/user-info.js';
import { RECORDS_PER_OBJECT, RECORD_MAX_BYTES, nextRecord, parseReport, withRecord, type ReconcileReport } from '../../../src/apiserver/registry/reconcile-record.js';
import { json } from '../helpers/clients.js';
import { startRegistryServer, type RegistryServer } from './registry-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const cm = (name: string): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });
const report = (o: Partial<ReconcileReport> = {}): ReconcileReport => ({
  controller: 'replicaset-controller',
  gap: { desired: { replicas: 3 }, actual: { replicas: 1 } },
  action: 'create 2',
  outcome: 'error',
  message: 'pods "x" is forbidden: no',
  ...o,
});

describe('the reconcile subresource', () => {
  let s: RegistryServer;
  beforeAll(async () => {
    s = await startRegistryServer('etcd');
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('keeps one record per controller: the same outcome counts on from its since, another starts over', async () => {
    const ns = await s.namespace();
    expect((await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, cm('c'))).status).toBe(201);
    const url = `/api/v1/namespaces/${ns}/configmaps/c/reconcile`;
    const first = await s.call('PUT', url, report());
    expect(first.status, first.body).toBe(200);
    const r1 = json<Obj>(first);
    expect(r1).toMatchObject({ apiVersion: 'setpoint.io/v1', kind: 'ReconcileRecord', metadata: { name: 'c', namespace: ns }, controller: 'replicaset-controller', outcome: 'error', count: 1 });
    expect(r1.since).toBe(r1.lastTime);
    const again = json<Obj>(await s.call('PUT', url, report({ reconciles: 4 })));
    expect(again).toMatchObject({ count: 5, since: r1.since });
    expect((await s.call('PUT', url, report({ controller: 'other', outcome: 'ok', action: 'wait' }))).status).toBe(200);
    const ok = json<Obj>(await s.call('PUT', url, report({ outcome: 'ok', action: 'none', gap: { desired: { replicas: 3 }, actual: { replicas: 3 } } })));
    expect(ok).toMatchObject({ outcome: 'ok', count: 1 });

    const got = await s.call('GET', url);
    expect(got.status, got.body).toBe(200);
    const list = json<Obj>(got);
    expect(list).toMatchObject({ apiVersion: 'setpoint.io/v1', kind: 'ReconcileRecordList', metadata: { name: 'c', namespace: ns } });
    expect(list.items.map((r: Obj) => [r.controller, r.outcome, r.count])).toEqual([
      ['other', 'ok', 1],
      ['replicaset-controller', 'ok', 1],
    ]);
    expect(list.items[1].gap).toEqual({ desired: { replicas: 3 }, actual: { replicas: 3 } });

    expect((await s.call('DELETE', `/api/v1/namespaces/${ns}/configmaps/c`)).status).toBe(200);
    expect((await s.client.get(`/registry/setpoint.io/reconcile/configmaps/${ns}/c`))).toBeUndefined();
    const gone = await s.call('GET', url);
    expect(gone.status).toBe(404);
    expect(json(gone)).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'configmaps "c" has no reconcile records' });
  });

  it('refuses a record for an object that does not exist, or is another by now', async () => {
    const ns = await s.namespace();
    const none = await s.call('PUT', `/api/v1/namespaces/${ns}/configmaps/nope/reconcile`, report());
    expect(none.status).toBe(404);
    expect(json(none)).toMatchObject({ reason: 'NotFound', message: 'configmaps "nope" not found' });
    expect((await s.client.get(`/registry/setpoint.io/reconcile/configmaps/${ns}/nope`))).toBeUndefined();
    expect((await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, cm('u'))).status).toBe(201);
    const other = await s.call('PUT', `/api/v1/namespaces/${ns}/configmaps/u/reconcile`, report({ uid: 'not-its-uid' }));
    expect(other.status).toBe(409);
    expect(json(other)).toMatchObject({ reason: 'Conflict' });
  });

  it('answers 422 Invalid for a malformed or oversized report, 405 for other verbs, and works on other groups', async () => {
    const ns = await s.namespace();
    expect((await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, cm('v'))).status).toBe(201);
    const url = `/api/v1/namespaces/${ns}/configmaps/v/reconcile`;
    const bad = await s.call('PUT', url, { controller: '', outcome: 'maybe', action: 'x', gap: {} });
    expect(bad.status).toBe(422);
    expect(json<Obj>(bad)).toMatchObject({ reason: 'Invalid', details: { kind: 'ReconcileReport', group: 'setpoint.io' } });
    expect(json<Obj>(bad).details.causes.map((c: Obj) => c.field)).toEqual(['controller', 'outcome']);
    const big = await s.call('PUT', url, report({ details: { blob: 'x'.repeat(RECORD_MAX_BYTES) } }));
    expect(big.status).toBe(422);
    expect(json<Obj>(big).message).toContain(`may not be more than ${RECORD_MAX_BYTES} bytes`);
    expect((await s.call('POST', url, report())).status).toBe(405);
    const dry = await s.call('PUT', `${url}?dryRun=All`, report());
    expect(dry.status, dry.body).toBe(200);
    expect((await s.call('GET', url)).status).toBe(404);

    const dep = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } };
    expect((await s.call('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, dep)).status).toBe(201);
    expect((await s.call('PUT', `/apis/apps/v1/namespaces/${ns}/deployments/d/reconcile`, report({ controller: 'deployment-controller' }))).status).toBe(200);
    const nsRec = await s.call('PUT', `/api/v1/namespaces/${ns}/reconcile`, report({ controller: 'namespace-controller', outcome: 'ok' }));
    expect(nsRec.status, nsRec.body).toBe(200);
    expect(json<Obj>(await s.call('GET', `/api/v1/namespaces/${ns}/reconcile`)).items).toHaveLength(1);
  });

  it('is listed in discovery beside history', async () => {
    const core = json<Obj>(await s.call('GET', '/api/v1'));
    expect(core.resources.find((r: Obj) => r.name === 'pods/reconcile')).toMatchObject({ group: 'setpoint.io', version: 'v1', kind: 'ReconcileRecordList', verbs: ['get', 'update'] });
  });
});

describe('reconcile records, bounds and merge', () => {
  it('caps the records per object, the least recently written going first', () => {
    let doc;
    for (let i = 0; i < RECORDS_PER_OBJECT + 3; i++) {
      doc = withRecord(doc, 'o', nextRecord(undefined, report({ controller: `c${String(i).padStart(2, '0')}` }), `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`));
    }
    expect(doc?.records.map((r) => r.controller)).toEqual(Array.from({ length: RECORDS_PER_OBJECT }, (_, i) => `c${String(i + 3).padStart(2, '0')}`));
  });

  it('keeps since while the outcome stays, and parses only what the shape allows', () => {
    const a = nextRecord(undefined, report(), 't1');
    const b = nextRecord(a, report({ action: 'create 1', reconciles: 2 }), 't2');
    expect(b).toMatchObject({ since: 't1', count: 3, lastTime: 't2', action: 'create 1' });
    expect(nextRecord(b, report({ outcome: 'waiting' }), 't3')).toMatchObject({ since: 't3', count: 1 });
    expect(parseReport({ controller: 'c', action: 'a', outcome: 'ok', gap: { desired: 1 }, reconciles: -1 })).toEqual({
      problems: [{ field: 'reconciles', type: 'FieldValueInvalid', message: 'Invalid value: -1: must be a non-negative integer' }],
    });
    expect(parseReport({ controller: 'c', action: 'a', outcome: 'ok', gap: { desired: 1 } })).toEqual({ report: { controller: 'c', action: 'a', outcome: 'ok', gap: { desired: 1, actual: null } } });
  });

  it('is refused to node agents, as history is', () => {
    const node = authenticatedUser('system:node:n1', '', ['system:nodes']);
    const info = { isResourceRequest: true, path: '', apiPrefix: 'api', apiGroup: '', apiVersion: 'v1', namespace: 'default', resource: 'pods', name: 'p', parts: [], subresource: 'reconcile' };
    expect(authorizeNode(node, { ...info, verb: 'update' })?.reason).toBe('Forbidden');
    expect(authorizeNode(node, { ...info, verb: 'get' })?.reason).toBe('Forbidden');
  });
});
