// Server-side apply: structured-merge-diff's own set-list cases (merge/set_test.go, on its "sets"
// schema), then the field manager on our kinds against what Kubernetes produces and documents — the
// managedFields of a kubectl create, the ConfigMap examples of the server-side apply page, conflicts
// worded as kubectl prints them, force, pruning of fields an applier stops applying, shared ownership,
// the replicas hand-over to an autoscaler, before-first-apply, kubectl's client-side apply upgrade and
// the cap on update managers.
import { describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/api/decode.js';
import { isApiError } from '../../src/api/api-error.js';
import { builtinSchemas, SchemaRegistry } from '../../src/api/schema/registry.js';
import { field, setList, str, struct, typeTable } from '../../src/api/schema/schema.js';
import type { GroupVersionKind, Schema } from '../../src/api/schema/schema.js';
import { FieldManager, managerFromUserAgent } from '../../src/api/ssa/field-manager.js';
import { FieldSet } from '../../src/api/ssa/field-set.js';
import { ApplyConflictError, decodeManagedFields } from '../../src/api/ssa/managed-fields.js';
import { fieldPE, valuePE } from '../../src/api/ssa/path-element.js';
import { Typed } from '../../src/api/ssa/typed.js';
import { Updater } from '../../src/api/ssa/updater.js';
import type { ManagedFields } from '../../src/api/ssa/updater.js';

type Obj = Record<string, unknown>;

describe("structured-merge-diff's set cases", () => {
  const reg = new SchemaRegistry(typeTable(struct('sets', 'SMD test type', { list: field(setList(str), 'an associative list of strings') })));
  const schema: Schema = { kind: 'ref', name: 'sets' };
  const updater = new Updater(new Typed(reg), schema);
  type Op = { op: 'apply' | 'update'; manager: string; list: string[] };
  const run = (ops: Op[]): { object: unknown; managed: Record<string, string[]> } => {
    let live: unknown = {};
    let managers: ManagedFields = new Map();
    for (const o of ops) {
      if (o.op === 'apply') {
        const r = updater.apply(live, { list: o.list }, 'v1', managers, o.manager, false);
        if (r.object !== undefined) live = r.object;
        managers = r.managers;
      } else {
        managers = updater.update(live, { list: o.list }, 'v1', managers, o.manager);
        live = { list: o.list };
      }
    }
    const managed: Record<string, string[]> = {};
    for (const [m, vs] of managers) managed[m] = vs.set.paths().map((p) => String((p[1] as { value: unknown }).value));
    return { object: live, managed };
  };

  it('apply_twice', () => {
    expect(run([{ op: 'apply', manager: 'default', list: ['a', 'c'] }, { op: 'apply', manager: 'default', list: ['a', 'b', 'c', 'd'] }])).toEqual({
      object: { list: ['a', 'b', 'c', 'd'] },
      managed: { default: ['a', 'b', 'c', 'd'] },
    });
  });

  it('apply_update_apply_no_overlap', () => {
    expect(
      run([
        { op: 'apply', manager: 'default', list: ['a', 'c'] },
        { op: 'update', manager: 'controller', list: ['a', 'b', 'c', 'd'] },
        { op: 'apply', manager: 'default', list: ['a', 'aprime', 'c', 'cprime'] },
      ]),
    ).toEqual({ object: { list: ['a', 'b', 'aprime', 'c', 'd', 'cprime'] }, managed: { default: ['a', 'aprime', 'c', 'cprime'], controller: ['b', 'd'] } });
  });

  it('apply_update_apply_with_overlap', () => {
    expect(
      run([
        { op: 'apply', manager: 'default', list: ['a', 'c'] },
        { op: 'update', manager: 'controller', list: ['a', 'b', 'c', 'd'] },
        { op: 'apply', manager: 'default', list: ['a', 'b', 'c'] },
      ]),
    ).toEqual({ object: { list: ['a', 'b', 'c', 'd'] }, managed: { default: ['a', 'b', 'c'], controller: ['b', 'd'] } });
  });

  it('apply_twice_reorder', () => {
    expect(run([{ op: 'apply', manager: 'default', list: ['a', 'b', 'c', 'd'] }, { op: 'apply', manager: 'default', list: ['a', 'd', 'c', 'b'] }])).toEqual({
      object: { list: ['a', 'd', 'c', 'b'] },
      managed: { default: ['a', 'b', 'c', 'd'] },
    });
  });

  it('apply_update_apply_reorder', () => {
    expect(
      run([
        { op: 'apply', manager: 'default', list: ['a', 'b', 'c', 'd'] },
        { op: 'update', manager: 'controller', list: ['a', 'd', 'c', 'b'] },
        { op: 'apply', manager: 'default', list: ['a', 'b', 'c', 'd'] },
      ]),
    ).toEqual({ object: { list: ['a', 'b', 'c', 'd'] }, managed: { default: ['a', 'b', 'c', 'd'] } });
  });

  it('apply_twice_remove', () => {
    expect(run([{ op: 'apply', manager: 'default', list: ['a', 'b', 'c', 'd'] }, { op: 'apply', manager: 'default', list: ['a', 'c'] }])).toEqual({
      object: { list: ['a', 'c'] },
      managed: { default: ['a', 'c'] },
    });
  });
});

const deployGvk: GroupVersionKind = { group: 'apps', version: 'v1', kind: 'Deployment' };
const cmGvk: GroupVersionKind = { group: '', version: 'v1', kind: 'ConfigMap' };
const clock = (): (() => Date) => {
  let t = Date.parse('2024-05-01T10:00:00Z');
  return () => new Date((t += 1000));
};
const normalize = (gvk: GroupVersionKind, o: Obj): Obj => decodeValue(builtinSchemas, builtinSchemas.kindSchema(gvk) as Schema, { value: o }).object;
const managedOf = (o: Obj): { manager: string; operation: string; apiVersion: string; fieldsV1: unknown; subresource?: string }[] =>
  ((o.metadata as Obj).managedFields ?? []) as { manager: string; operation: string; apiVersion: string; fieldsV1: unknown }[];
const entry = (o: Obj, manager: string): unknown => managedOf(o).find((e) => e.manager === manager)?.fieldsV1;
const withMeta = (o: Obj, meta: Obj): Obj => ({ ...o, metadata: { ...(o.metadata as Obj), ...meta } });

// A Deployment as kubectl create deployment sends it, after the API server's defaulting.
const created = (): Obj =>
  normalize(deployGvk, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx', namespace: 'default', labels: { app: 'nginx' } },
    spec: {
      replicas: 1, progressDeadlineSeconds: 600, revisionHistoryLimit: 10, selector: { matchLabels: { app: 'nginx' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'nginx' } },
        spec: {
          containers: [{ name: 'nginx', image: 'nginx', imagePullPolicy: 'Always', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' }],
          dnsPolicy: 'ClusterFirst', restartPolicy: 'Always', schedulerName: 'default-scheduler', securityContext: {}, terminationGracePeriodSeconds: 30,
        },
      },
    },
  });

describe('the field manager on our kinds', () => {
  it('records a create as Kubernetes does (kubectl create deployment)', () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: deployGvk, now: () => new Date('2024-05-01T10:00:00.5Z') });
    const out = fm.update(undefined, created(), 'kubectl-create');
    expect(managedOf(out)).toEqual([
      {
        manager: 'kubectl-create', operation: 'Update', apiVersion: 'apps/v1', time: '2024-05-01T10:00:00Z', fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': {
            'f:progressDeadlineSeconds': {}, 'f:replicas': {}, 'f:revisionHistoryLimit': {}, 'f:selector': {},
            'f:strategy': { 'f:rollingUpdate': { '.': {}, 'f:maxSurge': {}, 'f:maxUnavailable': {} }, 'f:type': {} },
            'f:template': {
              'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {}, 'f:resources': {}, 'f:terminationMessagePath': {}, 'f:terminationMessagePolicy': {} },
                },
                'f:dnsPolicy': {}, 'f:restartPolicy': {}, 'f:schedulerName': {}, 'f:securityContext': {}, 'f:terminationGracePeriodSeconds': {},
              },
            },
          },
        },
      },
    ]);
  });

  it("produces the server-side apply page's ConfigMap examples: apply, then a controller's update", () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: cmGvk, now: clock() });
    const applied = fm.apply(undefined, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'test-cm', namespace: 'default', labels: { 'test-label': 'test' } }, data: { key: 'some value' } }, 'kubectl', false);
    expect(managedOf(applied).map((e) => [e.manager, e.operation, e.apiVersion])).toEqual([['kubectl', 'Apply', 'v1']]);
    expect(entry(applied, 'kubectl')).toEqual({ 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:test-label': {} } } });
    expect(applied.data).toEqual({ key: 'some value' });
    const updated = fm.update(applied, { ...applied, data: { key: 'new value' } }, 'kube-controller-manager');
    expect(managedOf(updated).map((e) => [e.manager, e.operation])).toEqual([['kubectl', 'Apply'], ['kube-controller-manager', 'Update']]);
    expect(entry(updated, 'kubectl')).toEqual({ 'f:metadata': { 'f:labels': { 'f:test-label': {} } } });
    expect(entry(updated, 'kube-controller-manager')).toEqual({ 'f:data': { 'f:key': {} } });

    // The same change as an apply conflicts, in the words kubectl prints.
    let conflict: unknown;
    try {
      fm.apply(updated, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'test-cm', namespace: 'default', labels: { 'test-label': 'test' } }, data: { key: 'mine' } }, 'kubectl', false);
    } catch (e) {
      conflict = e;
    }
    expect(conflict).toBeInstanceOf(ApplyConflictError);
    const err = conflict as ApplyConflictError;
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "kube-controller-manager" using v1: .data.key');
    expect(err.toStatus()).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "kube-controller-manager" using v1: .data.key',
      reason: 'Conflict',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kube-controller-manager" using v1', field: '.data.key' }] },
      code: 409,
    });

    // Forced, the applier takes the field and the controller's entry, now empty, goes.
    const forced = fm.apply(updated, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'test-cm', namespace: 'default', labels: { 'test-label': 'test' } }, data: { key: 'mine' } }, 'kubectl', true);
    expect(forced.data).toEqual({ key: 'mine' });
    expect(managedOf(forced).map((e) => e.manager)).toEqual(['kubectl']);
    expect(entry(forced, 'kubectl')).toEqual({ 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:test-label': {} } } });
  });

  it("gives the brief's message for a replicas conflict with kubectl's client-side apply", () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: deployGvk, now: clock() });
    const live = fm.update(undefined, created(), 'kubectl-client-side-apply');
    let msg = '';
    try {
      fm.apply(withMeta(live, { uid: 'u1' }), { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx', namespace: 'default' }, spec: { replicas: 3 } }, 'argocd', false);
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toBe('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas');
  });

  it('lists several conflicts by manager, as kubectl prints them', () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: cmGvk, now: clock() });
    let live = fm.update(undefined, normalize(cmGvk, { metadata: { name: 'c' }, data: { a: '1', b: '2' } }), 'alpha');
    live = fm.update(live, { ...live, data: { a: '1', b: '2', c: '3' } }, 'beta');
    const err = (() => {
      try {
        fm.apply(live, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'x', b: 'y', c: 'z' } }, 'gamma', false);
      } catch (e) {
        return e as ApplyConflictError;
      }
      throw new Error('no conflict');
    })();
    expect(err.message).toBe('Apply failed with 3 conflicts: conflicts with "alpha" using v1:\n- .data.a\n- .data.b\nconflicts with "beta" using v1:\n- .data.c');
    expect(err.causes.map((c) => c.field)).toEqual(['.data.a', '.data.b', '.data.c']);
  });

  it('prunes what an applier stops applying, unless another manager owns it', () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: cmGvk, now: clock() });
    const cfg = (data: Obj): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data });
    let live = fm.apply(undefined, cfg({ a: '1', b: '2', c: '3' }), 'tool', false);
    live = fm.apply(live, cfg({ a: '1' }), 'tool', false);
    expect(live.data).toEqual({ a: '1' });
    live = fm.apply(live, cfg({ a: '1', b: '2' }), 'tool', false);
    live = fm.apply(live, cfg({ b: '2' }), 'other', false);
    live = fm.apply(live, cfg({ a: '1' }), 'tool', false);
    expect(live.data).toEqual({ a: '1', b: '2' });
    expect(entry(live, 'other')).toEqual({ 'f:data': { 'f:b': {} } });
    expect(entry(live, 'tool')).toEqual({ 'f:data': { 'f:a': {} } });
  });

  it('merges associative lists by key between appliers and replaces atomic lists', () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: deployGvk, now: clock() });
    const base = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } };
    const containers = (c: Obj[]): Obj => ({ ...base, spec: { template: { spec: { containers: c } } } });
    let live = fm.apply(undefined, containers([{ name: 'web', image: 'web:1' }]), 'team-a', false);
    live = fm.apply(live, containers([{ name: 'sidecar', image: 'proxy:1', args: ['--a'] }]), 'team-b', false);
    const names = (o: Obj): unknown => (((o.spec as Obj).template as Obj).spec as { containers: Obj[] }).containers.map((c) => [c.name, c.image, c.args]);
    expect(names(live)).toEqual([['web', 'web:1', undefined], ['sidecar', 'proxy:1', ['--a']]]);
    live = fm.apply(live, containers([{ name: 'sidecar', image: 'proxy:1', args: ['--b'] }]), 'team-b', false);
    expect(names(live)).toEqual([['web', 'web:1', undefined], ['sidecar', 'proxy:1', ['--b']]]);
    expect(entry(live, 'team-b')).toEqual({
      'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"sidecar"}': { '.': {}, 'f:args': {}, 'f:image': {}, 'f:name': {} } } } } },
    });
    // Team A stops applying its container: it goes, team B's stays.
    live = fm.apply(live, { ...base, spec: { replicas: 2 } }, 'team-a', false);
    expect(names(live)).toEqual([['sidecar', 'proxy:1', ['--b']]]);
  });

  it('shares ownership of equal values, and either sharer changing it conflicts with the other', () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: cmGvk, now: clock() });
    const cfg = (v: string): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: v } });
    let live = fm.apply(undefined, cfg('v'), 'one', false);
    live = fm.apply(live, cfg('v'), 'two', false);
    expect(entry(live, 'one')).toEqual({ 'f:data': { 'f:k': {} } });
    expect(entry(live, 'two')).toEqual({ 'f:data': { 'f:k': {} } });
    expect(() => fm.apply(live, cfg('w'), 'one', false)).toThrow('Apply failed with 1 conflict: conflict with "two": .data.k');
    // Giving it up: two applies without it; then one may change it.
    live = fm.apply(live, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }, 'two', false);
    expect(live.data).toEqual({ k: 'v' });
    live = fm.apply(live, cfg('w'), 'one', false);
    expect(live.data).toEqual({ k: 'w' });
  });

  it('hands spec.replicas over to an autoscaler as the documentation describes', () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: deployGvk, now: clock() });
    const manifest = (replicas?: number): Obj => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx-deployment', labels: { app: 'nginx' } },
      spec: { ...(replicas === undefined ? {} : { replicas }), selector: { matchLabels: { app: 'nginx' } }, template: { metadata: { labels: { app: 'nginx' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.14.2' }] } } },
    });
    let live = fm.apply(undefined, manifest(3), 'kubectl', false);
    live = fm.apply(live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx-deployment' }, spec: { replicas: 3 } }, 'handover-to-hpa', false);
    live = fm.apply(live, manifest(), 'kubectl', false);
    expect((live.spec as Obj).replicas).toBe(3);
    // The autoscaler's update takes the field; the hand-over manager is left with nothing and goes.
    live = fm.update(live, { ...live, spec: { ...(live.spec as Obj), replicas: 5 } }, 'horizontal-pod-autoscaler');
    expect(managedOf(live).map((e) => e.manager)).toEqual(['kubectl', 'horizontal-pod-autoscaler']);
  });

  it('gives fields that predate the first apply to before-first-apply', () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: cmGvk, now: clock() });
    const legacy = normalize(cmGvk, { metadata: { name: 'c', uid: 'u1' }, data: { old: '1' } });
    // An update of an object without managedFields does not start tracking.
    const untracked = fm.update(legacy, { ...legacy, data: { old: '2' } }, 'someone');
    expect((untracked.metadata as Obj).managedFields).toBeUndefined();
    const live = fm.apply(legacy, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { new: 'x' } }, 'tool', false);
    expect(managedOf(live).map((e) => [e.manager, e.operation])).toEqual([['tool', 'Apply'], ['before-first-apply', 'Update']]);
    expect(entry(live, 'before-first-apply')).toEqual({ 'f:data': { '.': {}, 'f:old': {} } });
    expect(live.data).toEqual({ new: 'x', old: '1' });
  });

  it("upgrades kubectl's client-side apply to server-side apply without conflicts on what last-applied describes", () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: cmGvk, now: clock() });
    const lastApplied = '{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"c","namespace":"default"}}\n';
    let live = fm.update(undefined, normalize(cmGvk, { metadata: { name: 'c', namespace: 'default', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } }, data: { a: '1' } }), 'kubectl-client-side-apply');
    live = fm.update(withMeta(live, { uid: 'u1' }), { ...live, data: { a: '1', b: 'scaled' } }, 'kubectl-edit');
    const cfg = (data: Obj): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data });
    // A field last-applied describes transfers; one changed by someone else still conflicts.
    const upgraded = fm.apply(live, cfg({ a: '2' }), 'kubectl', false);
    expect(upgraded.data).toEqual({ a: '2', b: 'scaled' });
    expect(entry(upgraded, 'kubectl')).toEqual({ 'f:data': { 'f:a': {} } });
    expect(((upgraded.metadata as Obj).annotations as Obj)['kubectl.kubernetes.io/last-applied-configuration']).toBe(
      '{"apiVersion":"v1","data":{"a":"2"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}\n',
    );
    expect(() => fm.apply(live, cfg({ a: '1', b: 'mine' }), 'kubectl', false)).toThrow('Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.b');
    expect(() => fm.apply(live, cfg({ a: '2' }), 'someone-else', false)).toThrow(/conflict with "kubectl-client-side-apply" using v1: \.data\.a/);
  });

  it('folds the oldest of more than ten update managers into ancient-changes', () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: cmGvk, now: clock() });
    let live = fm.update(undefined, normalize(cmGvk, { metadata: { name: 'c' }, data: {} }), 'm0');
    for (let i = 1; i <= 11; i++) live = fm.update(live, { ...live, data: { ...(live.data as Obj), [`k${i}`]: String(i) } }, `m${i}`);
    const managers = managedOf(live).map((e) => e.manager);
    expect(managers).toHaveLength(10);
    expect(managers[0]).toBe('ancient-changes');
    expect(entry(live, 'ancient-changes')).toEqual({ 'f:data': { '.': {}, 'f:k1': {}, 'f:k2': {} } });
  });

  it('keeps status out of main-resource ownership and tracks the status subresource separately', () => {
    const podGvk = { group: '', version: 'v1', kind: 'Pod' };
    const main = new FieldManager({ registry: builtinSchemas, gvk: podGvk, resetFields: [['status']], now: clock() });
    const status = new FieldManager({ registry: builtinSchemas, gvk: podGvk, subresource: 'status', resetFields: [['spec'], ['metadata']], now: clock() });
    let live = main.update(undefined, normalize(podGvk, { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] }, status: { phase: 'Pending' } }), 'kubectl');
    expect(JSON.stringify(entry(live, 'kubectl'))).not.toContain('status');
    live = status.update(live, { ...live, status: { phase: 'Running' } }, 'kubelet');
    const kubelet = managedOf(live).find((e) => e.manager === 'kubelet');
    expect(kubelet).toMatchObject({ operation: 'Update', apiVersion: 'v1', subresource: 'status', fieldsV1: { 'f:status': { 'f:phase': {} } } });
  });

  it('rejects bad apply requests with Kubernetes messages', () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: deployGvk, now: clock() });
    const fail = (cfg: Obj): [string, number, string] => {
      try {
        fm.apply(undefined, cfg, 'x', false);
      } catch (e) {
        if (isApiError(e)) return [e.code, e.status, e.message];
      }
      return ['', 0, ''];
    };
    expect(fail({ apiVersion: 'apps/v1beta1', kind: 'Deployment', metadata: { name: 'd' } })).toEqual(['APPLY_BAD_REQUEST', 400, 'invalid object type: apps/v1beta1, Kind=Deployment']);
    expect(fail({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', managedFields: [] } })).toEqual(['APPLY_BAD_REQUEST', 400, 'metadata.managedFields must be nil']);
    expect(fail({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' }, spec: { foo: 1 } })).toEqual([
      'APPLY_INVALID_OBJECT', 500, 'failed to create typed patch object (ns/d; apps/v1, Kind=Deployment): .spec.foo: field not declared in schema',
    ]);
    expect(fail({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template: { spec: { containers: [{ name: 'a' }, { name: 'a' }] } } } })[2]).toBe(
      'failed to create typed patch object (/d; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name="a"]',
    );
    expect(fail({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 'three' } })[2]).toBe(
      'failed to create typed patch object (/d; apps/v1, Kind=Deployment): .spec.replicas: expected numeric (int or float), got string',
    );
  });

  it('round-trips FieldsV1 and leaves a no-op apply unchanged', () => {
    const fm = new FieldManager({ registry: builtinSchemas, gvk: deployGvk, now: clock() });
    const live = fm.update(undefined, created(), 'kubectl-create');
    const decoded = decodeManagedFields(managedOf(live) as never);
    const set = [...decoded.fields.values()][0]?.set ?? FieldSet.empty();
    expect(set.toFieldsV1()).toEqual(entry(live, 'kubectl-create'));
    expect(set.has([fieldPE('spec'), fieldPE('replicas')])).toBe(true);
    expect(FieldSet.of([fieldPE('list'), valuePE('a')]).toFieldsV1()).toEqual({ 'f:list': { 'v:"a"': {} } });
    const cfg = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx', namespace: 'default' }, spec: { replicas: 1 } };
    const first = fm.apply(withMeta(live, { uid: 'u' }), cfg, 'tool', true);
    const second = fm.apply(first, cfg, 'tool', false);
    expect(second).toEqual(first);
    expect(managerFromUserAgent('kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07')).toBe('kubectl');
  });
});
