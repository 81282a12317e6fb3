// The registry's verbs over HTTP, on a real etcd 3.4 and on a Setpoint store: the same suite, the same
// answers. Each test uses a namespace of its own, so the tests share one server and stay independent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../etcd-client/helpers/store-cluster.js';
import { json } from '../helpers/clients.js';
import { startRegistryServer, type RegistryServer } from './registry-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const pod = (name: string, extra: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] },
  ...extra,
});

const deployment = (name: string, replicas = 2): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

describe.each(STORE_KINDS)('registry API on %s', (kind) => {
  let s: RegistryServer;

  beforeAll(async () => {
    s = await startRegistryServer(kind);
  });
  afterAll(async () => {
    await s?.stop();
  });

  const namespace = (): Promise<string> => s.namespace();

  it('makes the system namespaces', async () => {
    const r = await s.call('GET', '/api/v1/namespaces');
    expect(r.status).toBe(200);
    const names = json<Obj>(r).items.map((n: Obj) => n.metadata.name);
    expect(names).toEqual(expect.arrayContaining(['default', 'kube-system', 'kube-public', 'kube-node-lease']));
  });

  it('creates with server-owned metadata and defaults; a second create is AlreadyExists', async () => {
    const ns = await namespace();
    const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('a'));
    expect(r.status, r.body).toBe(201);
    const p = json<Obj>(r);
    expect(p.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(p.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(p.metadata.namespace).toBe(ns);
    expect(p.spec).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', terminationGracePeriodSeconds: 30, schedulerName: 'default-scheduler', enableServiceLinks: true });
    expect(p.spec.containers[0]).toMatchObject({ imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
    expect(p.status).toMatchObject({ phase: 'Pending', qosClass: 'BestEffort' });
    expect(p.metadata.managedFields?.[0]).toMatchObject({ operation: 'Update' });
    const again = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('a'));
    expect(again.status).toBe(409);
    expect(json(again)).toMatchObject({ reason: 'AlreadyExists', message: 'pods "a" already exists' });
    const gen = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, { ...pod(''), metadata: { generateName: 'web-' } });
    expect(gen.status).toBe(201);
    expect(json<Obj>(gen).metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
  });

  it('refuses content in a missing namespace, invalid objects with 422 causes, and a kind that does not match', async () => {
    const missing = await s.call('POST', '/api/v1/namespaces/nope-x/pods', pod('a'));
    expect(missing.status).toBe(404);
    expect(json(missing)).toMatchObject({ reason: 'NotFound', message: 'namespaces "nope-x" not found' });
    const ns = await namespace();
    const bad = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, { ...pod('Bad_Name'), spec: { containers: [{ name: 'c' }] } });
    expect(bad.status).toBe(422);
    const st = json<Obj>(bad);
    expect(st.reason).toBe('Invalid');
    expect(st.details.causes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'metadata.name', reason: 'FieldValueInvalid' }),
        { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[0].image' },
      ]),
    );
    const wrong = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, { ...pod('a'), apiVersion: 'apps/v1' });
    expect(wrong.status).toBe(400);
    expect(json(wrong)).toMatchObject({ message: 'the API version in the data (apps/v1) does not match the expected API version (v1)' });
    const strict = await s.call('POST', `/api/v1/namespaces/${ns}/configmaps?fieldValidation=Strict`, { metadata: { name: 'c' }, data: {}, bogus: 1 });
    expect(strict.status).toBe(400);
    expect(json(strict)).toMatchObject({ message: 'strict decoding error: unknown field "bogus"' });
    const warn = await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'c' }, bogus: 1 });
    expect(warn.status).toBe(201);
    expect(warn.headers['warning']).toBe('299 - "unknown field \\"bogus\\""');
    const list = await s.call('GET', `/api/v1/namespaces/${ns}/pods`);
    expect(json<Obj>(list).items).toEqual([]);
  });

  it('updates with optimistic concurrency; a no-op keeps the resourceVersion; generation follows the spec', async () => {
    const ns = await namespace();
    const created = json<Obj>(await s.call('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, deployment('d')));
    expect(created.metadata.generation).toBe(1);
    expect(created.spec).toMatchObject({ replicas: 2, revisionHistoryLimit: 10, progressDeadlineSeconds: 600, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } });
    const url = `/apis/apps/v1/namespaces/${ns}/deployments/d`;
    const same = await s.call('PUT', url, created);
    expect(same.status).toBe(200);
    expect(json<Obj>(same).metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    const labelled = json<Obj>(await s.call('PUT', url, { ...created, metadata: { ...created.metadata, labels: { x: 'y' } } }));
    expect(labelled.metadata.generation).toBe(1);
    expect(Number(labelled.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    const stale = await s.call('PUT', url, { ...created, spec: { ...created.spec, replicas: 5 } });
    expect(stale.status).toBe(409);
    expect(json(stale)).toMatchObject({
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on deployments.apps "d": the object has been modified; please apply your changes to the latest version and try again',
    });
    const scaled = json<Obj>(await s.call('PUT', url, { ...labelled, spec: { ...labelled.spec, replicas: 5 } }));
    expect(scaled.metadata.generation).toBe(2);
    // The main resource ignores status; /status ignores everything else.
    const withStatus = json<Obj>(await s.call('PUT', url, { ...scaled, status: { replicas: 9 } }));
    expect(withStatus.status?.replicas).toBeUndefined();
    const st = json<Obj>(await s.call('PUT', `${url}/status`, { ...withStatus, spec: { ...withStatus.spec, replicas: 1 }, status: { replicas: 3 } }));
    expect(st.status.replicas).toBe(3);
    expect(st.spec.replicas).toBe(5);
    const immutable = await s.call('PUT', url, { ...st, spec: { ...st.spec, selector: { matchLabels: { app: 'other' } }, template: { ...st.spec.template, metadata: { labels: { app: 'other' } } } } });
    expect(immutable.status).toBe(422);
    expect(json<Obj>(immutable).details.causes).toEqual([expect.objectContaining({ field: 'spec.selector', message: expect.stringContaining('field is immutable') })]);
  });

  it('patches with all four types; apply conflicts unless forced', async () => {
    const ns = await namespace();
    await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'c' }, data: { a: '1' } });
    const url = `/api/v1/namespaces/${ns}/configmaps/c`;
    const merge = await s.call('PATCH', url, { data: { b: '2' } }, { 'content-type': 'application/merge-patch+json' });
    expect(json<Obj>(merge).data).toEqual({ a: '1', b: '2' });
    const jp = await s.call('PATCH', url, [{ op: 'remove', path: '/data/a' }], { 'content-type': 'application/json-patch+json' });
    expect(json<Obj>(jp).data).toEqual({ b: '2' });
    const smp = await s.call('PATCH', url, { data: { c: '3' } }, { 'content-type': 'application/strategic-merge-patch+json' });
    expect(json<Obj>(smp).data).toEqual({ b: '2', c: '3' });
    const noop = await s.call('PATCH', url, { data: { c: '3' } }, { 'content-type': 'application/merge-patch+json' });
    expect(json<Obj>(noop).metadata.resourceVersion).toBe(json<Obj>(smp).metadata.resourceVersion);
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  b: applied\n';
    const conflict = await s.call('PATCH', `${url}?fieldManager=tool`, yaml, { 'content-type': 'application/apply-patch+yaml' });
    expect(conflict.status).toBe(409);
    expect(json<Obj>(conflict).details.causes[0]).toMatchObject({ reason: 'FieldManagerConflict', field: '.data.b' });
    const forced = await s.call('PATCH', `${url}?fieldManager=tool&force=true`, yaml, { 'content-type': 'application/apply-patch+yaml' });
    expect(forced.status, forced.body).toBe(200);
    expect(json<Obj>(forced).data.b).toBe('applied');
    const made = await s.call('PATCH', `/api/v1/namespaces/${ns}/configmaps/new?fieldManager=tool`, yaml.replace('name: c', 'name: new'), { 'content-type': 'application/apply-patch+yaml' });
    expect(made.status, made.body).toBe(201);
    const missing = await s.call('PATCH', `/api/v1/namespaces/${ns}/configmaps/none`, { data: {} }, { 'content-type': 'application/merge-patch+json' });
    expect(missing.status).toBe(404);
  });

  it('lists with label and field selectors and pages', async () => {
    const ns = await namespace();
    for (const [n, app, node] of [['a', 'web', 'n1'], ['b', 'db', 'n2'], ['c', 'web', '']] as const) {
      const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, { ...pod(n), metadata: { name: n, labels: { app } }, spec: { ...pod(n).spec, ...(node ? { nodeName: node } : {}) } });
      expect(r.status).toBe(201);
    }
    const names = async (q: string): Promise<string[]> => json<Obj>(await s.call('GET', `/api/v1/namespaces/${ns}/pods?${q}`)).items.map((p: Obj) => p.metadata.name);
    expect(await names('labelSelector=app%3Dweb')).toEqual(['a', 'c']);
    expect(await names('labelSelector=app+notin+(web)')).toEqual(['b']);
    expect(await names('labelSelector=!app')).toEqual([]);
    expect(await names('fieldSelector=spec.nodeName%3Dn2')).toEqual(['b']);
    expect(await names('fieldSelector=spec.nodeName%3D,status.phase%3DPending')).toEqual(['c']);
    const badField = await s.call('GET', `/api/v1/namespaces/${ns}/pods?fieldSelector=spec.foo%3Dx`);
    expect(badField.status).toBe(400);
    expect(json(badField)).toMatchObject({ message: 'field label not supported: spec.foo' });
    const page = json<Obj>(await s.call('GET', `/api/v1/namespaces/${ns}/pods?limit=2`));
    expect(page.items).toHaveLength(2);
    expect(page.metadata.continue).toBeTruthy();
    const rest = json<Obj>(await s.call('GET', `/api/v1/namespaces/${ns}/pods?limit=2&continue=${encodeURIComponent(page.metadata.continue)}`));
    expect(rest.items.map((p: Obj) => p.metadata.name)).toEqual(['c']);
    expect(page.kind).toBe('PodList');
    expect(page.items[0].kind).toBeUndefined();
  });

  it('renders server-side Tables with Kubernetes columns', async () => {
    const ns = await namespace();
    await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('a'));
    const r = await s.call('GET', `/api/v1/namespaces/${ns}/pods`, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
    expect(r.headers['content-type']).toBe('application/json;as=Table;v=v1;g=meta.k8s.io');
    const t = json<Obj>(r);
    expect(t.kind).toBe('Table');
    expect(t.columnDefinitions.map((c: Obj) => c.name)).toEqual(['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates']);
    expect(t.rows[0].cells.slice(0, 4)).toEqual(['a', '0/1', 'Pending', '0']);
  });

  it('deletes: at once, gracefully for pods on a node, with finalizers, with Orphan', async () => {
    const ns = await namespace();
    await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'c' } });
    const gone = await s.call('DELETE', `/api/v1/namespaces/${ns}/configmaps/c`);
    expect(json(gone)).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'c', kind: 'configmaps' } });
    expect((await s.call('GET', `/api/v1/namespaces/${ns}/configmaps/c`)).status).toBe(404);
    const notFound = await s.call('DELETE', `/api/v1/namespaces/${ns}/configmaps/c`);
    expect(json(notFound)).toMatchObject({ code: 404, message: 'configmaps "c" not found' });

    await s.call('POST', `/api/v1/namespaces/${ns}/pods`, { ...pod('p'), spec: { ...pod('p').spec, nodeName: 'n1' } });
    const graceful = json<Obj>(await s.call('DELETE', `/api/v1/namespaces/${ns}/pods/p`));
    expect(graceful.metadata.deletionTimestamp).toBeTruthy();
    expect(graceful.metadata.deletionGracePeriodSeconds).toBe(30);
    expect((await s.call('GET', `/api/v1/namespaces/${ns}/pods/p`)).status).toBe(200);
    await s.call('DELETE', `/api/v1/namespaces/${ns}/pods/p?gracePeriodSeconds=0`);
    expect((await s.call('GET', `/api/v1/namespaces/${ns}/pods/p`)).status).toBe(404);

    await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'f', finalizers: ['example.com/hold'] } });
    const held = json<Obj>(await s.call('DELETE', `/api/v1/namespaces/${ns}/configmaps/f`));
    expect(held.metadata.deletionTimestamp).toBeTruthy();
    const current = json<Obj>(await s.call('GET', `/api/v1/namespaces/${ns}/configmaps/f`));
    await s.call('PUT', `/api/v1/namespaces/${ns}/configmaps/f`, { ...current, metadata: { ...current.metadata, finalizers: [] } });
    expect((await s.call('GET', `/api/v1/namespaces/${ns}/configmaps/f`)).status).toBe(404);

    await s.call('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { ...deployment('r'), kind: 'ReplicaSet' });
    const orphanReply = await s.call('DELETE', `/apis/apps/v1/namespaces/${ns}/replicasets/r`, { propagationPolicy: 'Orphan' });
    expect(orphanReply.body).toContain('"orphan"');
    const orphaned = json<Obj>(orphanReply);
    expect(orphaned.metadata.finalizers).toEqual(['orphan']);

    const pre = await s.call('DELETE', `/apis/apps/v1/namespaces/${ns}/replicasets/r`, { preconditions: { uid: 'not-it' } });
    expect(pre.status).toBe(409);
  });

  it('turns a deleted namespace Terminating and refuses new content in it', async () => {
    const ns = await namespace();
    const r = json<Obj>(await s.call('DELETE', `/api/v1/namespaces/${ns}`));
    expect(r.status.phase).toBe('Terminating');
    expect(r.metadata.deletionTimestamp).toBeTruthy();
    const refused = await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'c' } });
    expect(refused.status).toBe(403);
    expect(json(refused)).toMatchObject({ reason: 'Forbidden', message: `configmaps "c" is forbidden: unable to create new content in namespace ${ns} because it is being terminated` });
    const cur = json<Obj>(await s.call('GET', `/api/v1/namespaces/${ns}`));
    const fin = await s.call('PUT', `/api/v1/namespaces/${ns}/finalize`, { ...cur, spec: { finalizers: [] } });
    expect(fin.status, fin.body).toBe(200);
    await s.call('DELETE', `/api/v1/namespaces/${ns}`);
    expect((await s.call('GET', `/api/v1/namespaces/${ns}`)).status).toBe(404);
  });

  it('stores nothing on dryRun=All', async () => {
    const ns = await namespace();
    const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, pod('dry'));
    expect(r.status).toBe(201);
    expect(json<Obj>(r).spec.restartPolicy).toBe('Always');
    expect((await s.call('GET', `/api/v1/namespaces/${ns}/pods/dry`)).status).toBe(404);
    expect(await s.client.get(`/registry/setpoint.io/history/pods/${ns}/dry`)).toBeUndefined();
  });

  it('scales through /scale and binds pods through /binding', async () => {
    const ns = await namespace();
    await s.call('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, deployment('d'));
    const sc = json<Obj>(await s.call('GET', `/apis/apps/v1/namespaces/${ns}/deployments/d/scale`));
    expect(sc).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 }, status: { replicas: 0, selector: 'app=d' } });
    const up = await s.call('PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/d/scale`, { spec: { replicas: 4 } }, { 'content-type': 'application/merge-patch+json' });
    expect(json<Obj>(up).spec.replicas).toBe(4);
    const d = json<Obj>(await s.call('GET', `/apis/apps/v1/namespaces/${ns}/deployments/d`));
    expect(d.spec.replicas).toBe(4);
    expect(d.metadata.generation).toBe(2);

    await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('p'));
    const bind = await s.call('POST', `/api/v1/namespaces/${ns}/pods/p/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: 'n1' } });
    expect(bind.status, bind.body).toBe(201);
    const p = json<Obj>(await s.call('GET', `/api/v1/namespaces/${ns}/pods/p`));
    expect(p.spec.nodeName).toBe('n1');
    expect(p.status.conditions).toEqual([expect.objectContaining({ type: 'PodScheduled', status: 'True' })]);
    const again = await s.call('POST', `/api/v1/namespaces/${ns}/pods/p/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: 'n2' } });
    expect(again.status).toBe(409);
    const moved = await s.call('PATCH', `/api/v1/namespaces/${ns}/pods/p`, { spec: { nodeName: 'n2' } }, { 'content-type': 'application/merge-patch+json' });
    expect(moved.status).toBe(422);
  });

  it('watches from a resourceVersion', async () => {
    const ns = await namespace();
    const created = json<Obj>(await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'w' } }));
    const watch = s.call('GET', `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${created.metadata.resourceVersion}&timeoutSeconds=2`);
    await s.call('PATCH', `/api/v1/namespaces/${ns}/configmaps/w`, { data: { a: '1' } }, { 'content-type': 'application/merge-patch+json' });
    const r = await watch;
    const events = r.body.trim().split('\n').map((l) => JSON.parse(l) as Obj).filter((e) => e.type !== 'BOOKMARK');
    expect(events[0]).toMatchObject({ type: 'MODIFIED', object: { data: { a: '1' } } });
  });

  it('keeps a bounded admission history beside the object, deleted with it', async () => {
    const ns = await namespace();
    await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('h'));
    await s.call('PATCH', `/api/v1/namespaces/${ns}/pods/h`, { metadata: { labels: { x: 'y' } } }, { 'content-type': 'application/merge-patch+json' });
    const key = `/registry/setpoint.io/history/pods/${ns}/h`;
    const doc = JSON.parse((await s.client.get(key))?.value.toString() ?? '{}') as Obj;
    expect(doc.entries.map((e: Obj) => e.operation)).toEqual(['CREATE', 'UPDATE']);
    expect(doc.entries[0].records[0]).toMatchObject({ stage: 'defaulting', plugin: 'defaults', allowed: true });
    expect(doc.entries[0].records[0].changedPaths).toContain('spec.restartPolicy');
    await s.call('DELETE', `/api/v1/namespaces/${ns}/pods/h`);
    expect(await s.client.get(key)).toBeUndefined();
  });

  it('fences writes with a Lease token', async () => {
    const ns = await namespace();
    await s.call('POST', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, { metadata: { name: 'l' }, spec: { holderIdentity: 'me', leaseTransitions: 2 } });
    const ok = await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'a' } }, { 'setpoint-fencing-token': `${ns}/l/me/2` });
    expect(ok.status).toBe(201);
    const deposed = await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'b' } }, { 'setpoint-fencing-token': `${ns}/l/me/1` });
    expect(deposed.status).toBe(409);
    expect(json(deposed)).toMatchObject({ reason: 'Conflict', message: expect.stringContaining(`lease ${ns}/l is held by "me" (transitions 2), not by the caller "me" (transitions 1)`) });
    expect((await s.call('GET', `/api/v1/namespaces/${ns}/configmaps/b`)).status).toBe(404);
  });

  it('serves the same Events as core/v1 and events.k8s.io/v1', async () => {
    const ns = await namespace();
    const now = new Date().toISOString().replace(/\.\d+Z$/, '.000000Z');
    const made = await s.call('POST', `/apis/events.k8s.io/v1/namespaces/${ns}/events`, {
      metadata: { name: 'e1' },
      eventTime: now,
      reportingController: 'setpoint.io/scheduler',
      reportingInstance: 'sched-1',
      action: 'Scheduling',
      reason: 'FailedScheduling',
      type: 'Warning',
      note: '0/3 nodes are available: 3 Insufficient cpu.',
      regarding: { kind: 'Pod', namespace: ns, name: 'p' },
    });
    expect(made.status, made.body).toBe(201);
    expect(json<Obj>(made)).toMatchObject({ apiVersion: 'events.k8s.io/v1', note: '0/3 nodes are available: 3 Insufficient cpu.', regarding: { name: 'p' } });
    const core = json<Obj>(await s.call('GET', `/api/v1/namespaces/${ns}/events/e1`));
    expect(core).toMatchObject({ apiVersion: 'v1', kind: 'Event', message: '0/3 nodes are available: 3 Insufficient cpu.', involvedObject: { kind: 'Pod', name: 'p' }, reportingComponent: 'setpoint.io/scheduler' });
    const selected = json<Obj>(await s.call('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name%3Dp`));
    expect(selected.items.map((e: Obj) => e.metadata.name)).toEqual(['e1']);
    const missing = await s.call('POST', `/apis/events.k8s.io/v1/namespaces/${ns}/events`, { metadata: { name: 'e2' }, regarding: { kind: 'Pod', name: 'p' } });
    expect(missing.status).toBe(422);
    await s.call('POST', `/api/v1/namespaces/${ns}/events`, { metadata: { name: 'e3' }, involvedObject: { kind: 'Pod', name: 'q', namespace: ns }, message: 'hi', source: { component: 'agent' } });
    expect(json<Obj>(await s.call('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events/e3`))).toMatchObject({ note: 'hi', regarding: { name: 'q' }, reportingController: 'agent', deprecatedSource: { component: 'agent' } });
  });
});
