// The built-in admission plugins through a real API server on a real etcd 3.4: NamespaceLifecycle,
// ServiceAccount, DefaultTolerationSeconds (with its flags' values), Priority, each with Kubernetes'
// messages, and the records they leave in the object's history for `setpoint why`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApiServerFlags } from '../../../src/apiserver/apiserver-flags.js';
import type { HistoryDocument } from '../../../src/apiserver/registry/history.js';
import { waitFor } from '../../../src/harness/wait.js';
import { json } from '../helpers/clients.js';
import { startRegistryServer, type RegistryServer } from '../registry/registry-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const pod = (name: string, spec: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec },
});

describe('built-in admission plugins', () => {
  let s: RegistryServer;

  beforeAll(async () => {
    // Not Kubernetes' 300 s: the values show that the flags reach the plugin.
    s = await startRegistryServer('etcd', '/registry', { notReadyTolerationSeconds: 60, unreachableTolerationSeconds: 120 });
  });
  afterAll(async () => {
    await s?.stop();
  });

  const namespace = (): Promise<string> => s.namespace('p');

  async function history(resource: string, ns: string, name: string): Promise<HistoryDocument> {
    return (await s.api.ctx.raw.get(`/registry/setpoint.io/history/${resource}/${ns}/${name}`)) as HistoryDocument;
  }

  it('NamespaceLifecycle: no content in a missing or terminating namespace, system namespaces undeletable', async () => {
    const missing = await s.call('POST', '/api/v1/namespaces/nope-x/pods', pod('a'));
    expect(missing.status).toBe(404);
    expect(json(missing)).toMatchObject({ reason: 'NotFound', message: 'namespaces "nope-x" not found' });
    // Nothing is kept for it: no namespace, no history that anything would ever delete.
    await expect(s.api.ctx.raw.get('/registry/setpoint.io/history/pods/nope-x/a')).rejects.toMatchObject({ code: 'NotFound' });

    const ns = await namespace();
    // The namespace's own finalizer keeps it Terminating (no namespace controller runs here).
    const del = await s.call('DELETE', `/api/v1/namespaces/${ns}`);
    expect(del.status, del.body).toBe(200);
    const refused = await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } });
    expect(refused.status).toBe(403);
    expect(json(refused)).toMatchObject({
      reason: 'Forbidden',
      message: `configmaps "cm" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
      details: { name: 'cm', kind: 'configmaps', causes: [{ reason: 'NamespaceTerminating', message: `namespace ${ns} is being terminated`, field: 'metadata.namespace' }] },
    });

    const sys = await s.call('DELETE', '/api/v1/namespaces/kube-system');
    expect(sys.status).toBe(403);
    expect(json(sys).message).toBe('namespaces "kube-system" is forbidden: this namespace may not be deleted');
  });

  it('ServiceAccount and DefaultTolerationSeconds default a pod, and the history records who changed what', async () => {
    const ns = await namespace();
    const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('web'));
    expect(r.status, r.body).toBe(201);
    const p = json<Obj>(r);
    expect(p.spec.serviceAccountName).toBe('default');
    expect(p.spec.serviceAccount).toBe('default');
    expect(p.spec.tolerations).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 },
    ]);

    const own = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('own', {
      serviceAccountName: 'builder',
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }],
    }));
    expect(own.status, own.body).toBe(201);
    const o = json<Obj>(own);
    expect(o.spec.serviceAccountName).toBe('builder');
    expect(o.spec.tolerations).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 },
    ]);

    const h = await history('pods', ns, 'web');
    const records = h.entries[0]?.records ?? [];
    expect(records.map((x) => [x.stage, x.plugin])).toEqual([
      ['defaulting', 'defaults'],
      ['mutating', 'ServiceAccount'],
      ['mutating', 'DefaultTolerationSeconds'],
      ['mutating', 'Priority'],
    ]);
    expect(records.find((x) => x.plugin === 'DefaultTolerationSeconds')?.changedPaths).toEqual(['spec.tolerations']);
    expect(records.find((x) => x.plugin === 'ServiceAccount')?.changedPaths).toEqual(['spec.serviceAccountName', 'spec.serviceAccount']);
    expect(records.find((x) => x.plugin === 'Priority')?.changedPaths).toEqual(['spec.priority', 'spec.preemptionPolicy']);
  });

  it('the flags default to Kubernetes\' 300 seconds', () => {
    const f = parseApiServerFlags({ 'etcd-servers': 'http://127.0.0.1:2379' });
    expect(f.admission).toEqual({ notReadyTolerationSeconds: 300, unreachableTolerationSeconds: 300 });
    const g = parseApiServerFlags({ 'etcd-servers': 'http://127.0.0.1:2379', 'default-not-ready-toleration-seconds': '30' });
    expect(g.admission.notReadyTolerationSeconds).toBe(30);
  });

  it('Priority: the system classes exist and resolve; unknown classes and hand-set priorities are refused', async () => {
    const sys = await s.call('GET', '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical');
    expect(sys.status).toBe(200);
    expect(json(sys)).toMatchObject({ value: 2000001000, globalDefault: false, preemptionPolicy: 'PreemptLowerPriority' });
    const ns = await namespace();
    const crit = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('crit', { priorityClassName: 'system-cluster-critical' }));
    expect(crit.status, crit.body).toBe(201);
    expect(json<Obj>(crit).spec).toMatchObject({ priorityClassName: 'system-cluster-critical', priority: 2000000000, preemptionPolicy: 'PreemptLowerPriority' });

    const none = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('plain'));
    expect(json<Obj>(none).spec).toMatchObject({ priority: 0, preemptionPolicy: 'PreemptLowerPriority' });

    const unknown = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('x', { priorityClassName: 'gold' }));
    expect(unknown.status).toBe(403);
    expect(json(unknown)).toMatchObject({ reason: 'Forbidden', message: 'pods "x" is forbidden: no PriorityClass with name gold was found' });
    const refusedEntry = (await history('pods', ns, 'x')).entries[0];
    expect(refusedEntry).toMatchObject({ allowed: false, message: 'pods "x" is forbidden: no PriorityClass with name gold was found' });
    expect(refusedEntry?.records.at(-1)).toMatchObject({ stage: 'mutating', plugin: 'Priority', allowed: false });

    const handSet = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('y', { priority: 5 }));
    expect(handSet.status).toBe(403);
    expect(json(handSet).message).toBe(
      'pods "y" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name',
    );

    // A class made just before its pod resolves (the cache may not have it yet: the store is asked).
    const gold = await s.call('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'gold' }, value: 1000, preemptionPolicy: 'Never' });
    expect(gold.status, gold.body).toBe(201);
    const golden = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('g', { priorityClassName: 'gold' }));
    expect(golden.status, golden.body).toBe(201);
    expect(json<Obj>(golden).spec).toMatchObject({ priority: 1000, preemptionPolicy: 'Never' });

    const delSys = await s.call('DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical');
    expect(delSys.status).toBe(403);
    expect(json(delSys).message).toBe('priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted');
  });

  it('Priority: the globalDefault class names pods that name none, and only one default may exist', async () => {
    const pc = (name: string, value: number): Obj => ({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value, globalDefault: true });
    const first = await s.call('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', pc('everyday', 7));
    expect(first.status, first.body).toBe(201);
    const ns = await namespace();
    // The plugin reads the cache, which sees the new default a moment later (as Kubernetes' informer does).
    let n = 0;
    const p = await waitFor('a pod named by the default class', async () => {
      const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, pod(`d${n++}`));
      const spec = json<Obj>(r).spec;
      return spec?.priorityClassName === 'everyday' ? spec : undefined;
    }, { timeoutMs: 10_000 });
    expect(p).toMatchObject({ priority: 7 });

    const second = await s.call('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', pc('other', 8));
    expect(second.status).toBe(403);
    expect(json(second).message).toBe('priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass everyday is already marked as default. Only one default can exist');
    const gone = await s.call('DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses/everyday');
    expect(gone.status).toBe(200);
  });
});
