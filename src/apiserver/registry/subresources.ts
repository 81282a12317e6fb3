// Subresources that are not the object itself: /scale (autoscaling/v1 Scale over spec.replicas and the
// status' replicas and selector), pods/binding (the scheduler's write of spec.nodeName), pods/eviction (a
// delete that asks first) and namespaces/finalize (spec.finalizers only). Each writes its parent through
// the same update and delete code as every other write.
import { formatLabelSelector, type LabelSelector } from '../../api/label-selector.js';
import { applyJSONPatch } from '../../api/patch/json-patch.js';
import { applyMergePatch } from '../../api/patch/merge-patch.js';
import type { ApiRequest, ApiResponse } from '../handler.js';
import type { StoredObject } from '../storage/interface.js';
import { StatusError, statuses } from '../status.js';
import { checkTypeMeta, parseText } from './body.js';
import { deleteObject, deleteOptionsOf } from './delete.js';
import { dryRunOf, type GenericStore, type WriteScope } from './generic-store.js';
import { asStatusError } from './registry-errors.js';
import { rfc3339 } from './store-context.js';
import { deepCopy } from './strategy.js';
import { updateObject } from './update.js';

const SCALE_GVK = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function scaleOf(obj: StoredObject): Record<string, unknown> {
  const spec = asRecord(obj['spec']);
  const status = asRecord(obj['status']);
  const m = obj.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m['creationTimestamp'] },
    spec: { replicas: typeof spec['replicas'] === 'number' ? spec['replicas'] : 0 },
    status: {
      replicas: typeof status['replicas'] === 'number' ? status['replicas'] : 0,
      selector: formatLabelSelector(spec['selector'] as LabelSelector | undefined),
    },
  };
}

function success(code: number): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code };
}

async function scale(store: GenericStore, req: ApiRequest, res: ApiResponse, scope: WriteScope): Promise<void> {
  const { namespace, name } = req.info;
  if (req.info.verb === 'get') {
    res.object(200, scaleOf(await store.storage.get(store.key(namespace, name))));
    return;
  }
  if (req.info.verb !== 'update' && req.info.verb !== 'patch') throw new StatusError(statuses.methodNotSupported(store.groupResource, req.info.verb));
  const text = (await req.body()).toString('utf8');
  const patchType = req.contentType ?? '';
  const out = await updateObject(
    store,
    { ...scope, subresource: '' },
    namespace,
    name,
    (current) => {
      if (current === undefined) return undefined;
      const before = scaleOf(current);
      let wanted: Record<string, unknown>;
      try {
        if (req.info.verb === 'update') wanted = checkTypeMeta(parseText(text, req.contentType, SCALE_GVK), SCALE_GVK);
        else if (patchType === 'application/json-patch+json') wanted = asRecord(applyJSONPatch(before, parseText(text, 'application/json', SCALE_GVK)));
        else if (patchType === 'application/merge-patch+json' || patchType === 'application/strategic-merge-patch+json') wanted = asRecord(applyMergePatch(before, parseText(text, 'application/json', SCALE_GVK)));
        else throw new StatusError(statuses.unsupportedMediaType(['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']));
      } catch (e) {
        throw asStatusError(e);
      }
      const replicas = asRecord(wanted['spec'])['replicas'];
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
        throw new StatusError(
          statuses.invalid(SCALE_GVK, name, [{ type: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${String(replicas)}: must be greater than or equal to 0` }]),
        );
      }
      const rv = asRecord(wanted['metadata'])['resourceVersion'];
      const next = deepCopy(current) as StoredObject;
      next['spec'] = { ...asRecord(next['spec']), replicas };
      if (typeof rv === 'string' && rv !== '') next.metadata.resourceVersion = rv;
      return { object: next, warnings: [] };
    },
    { allowCreate: false, manager: store.managerName(req) },
  );
  res.object(200, scaleOf(out.object));
}

async function binding(store: GenericStore, req: ApiRequest, res: ApiResponse, scope: WriteScope): Promise<void> {
  if (req.info.verb !== 'create') throw new StatusError(statuses.methodNotSupported(store.groupResource, req.info.verb));
  const { namespace, name } = req.info;
  const bindingGvk = { group: '', version: 'v1', kind: 'Binding' };
  const body = checkTypeMeta(parseText((await req.body()).toString('utf8'), req.contentType, bindingGvk), bindingGvk);
  const target = asRecord(body['target']);
  const node = typeof target['name'] === 'string' ? target['name'] : '';
  const bname = asRecord(body['metadata'])['name'];
  if (typeof bname === 'string' && bname !== '' && bname !== name) throw new StatusError(statuses.badRequest('name in URL does not match name in Binding object'));
  if (node === '') {
    throw new StatusError(statuses.invalid(bindingGvk, name, [{ type: 'FieldValueRequired', field: 'target.name', message: 'Required value' }]));
  }
  await updateObject(
    store,
    { ...scope, subresource: 'binding' },
    namespace,
    name,
    (current) => {
      if (current === undefined) return undefined;
      const next = deepCopy(current) as StoredObject;
      const spec = asRecord(next['spec']);
      if (current.metadata['deletionTimestamp']) throw new StatusError(statuses.conflict(store.groupResource, name, `pod ${name} is being deleted, cannot be assigned to a host`));
      if (typeof spec['nodeName'] === 'string' && spec['nodeName'] !== '') {
        throw new StatusError(statuses.conflict(store.groupResource, name, `pod ${name} is already assigned to node ${JSON.stringify(spec['nodeName'])}`));
      }
      next['spec'] = { ...spec, nodeName: node };
      const status = asRecord(next['status']);
      const conds = (Array.isArray(status['conditions']) ? (status['conditions'] as Record<string, unknown>[]) : []).filter((c) => c['type'] !== 'PodScheduled');
      conds.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339(store.ctx.now()) });
      next['status'] = { ...status, conditions: conds };
      return { object: next, warnings: [] };
    },
    { allowCreate: false, manager: store.managerName(req) },
  );
  res.object(201, success(201));
}

async function eviction(store: GenericStore, req: ApiRequest, res: ApiResponse, scope: WriteScope): Promise<void> {
  if (req.info.verb !== 'create') throw new StatusError(statuses.methodNotSupported(store.groupResource, req.info.verb));
  const gvk = { group: 'policy', version: 'v1', kind: 'Eviction' };
  const body = checkTypeMeta(parseText((await req.body()).toString('utf8'), req.contentType, gvk), gvk);
  const opts = deleteOptionsOf(req, JSON.stringify(asRecord(body['deleteOptions'])));
  await deleteObject(store, { ...scope, subresource: 'eviction' }, req.info.namespace, req.info.name, opts);
  res.object(201, success(201));
}

async function finalize(store: GenericStore, req: ApiRequest, res: ApiResponse, scope: WriteScope): Promise<void> {
  if (req.info.verb !== 'update') throw new StatusError(statuses.methodNotSupported(store.groupResource, req.info.verb));
  const body = checkTypeMeta(parseText((await req.body()).toString('utf8'), req.contentType, store.gvk), store.gvk);
  const finalizers = asRecord(body['spec'])['finalizers'];
  const out = await updateObject(
    store,
    { ...scope, subresource: 'finalize' },
    '',
    req.info.name,
    (current) => {
      if (current === undefined) return undefined;
      const next = deepCopy(current) as StoredObject;
      next['spec'] = { ...asRecord(next['spec']), ...(Array.isArray(finalizers) && finalizers.length > 0 ? { finalizers } : {}) };
      if (!Array.isArray(finalizers) || finalizers.length === 0) delete (next['spec'] as Record<string, unknown>)['finalizers'];
      const rv = asRecord(body['metadata'])['resourceVersion'];
      if (typeof rv === 'string' && rv !== '') next.metadata.resourceVersion = rv;
      return { object: next, warnings: [] };
    },
    { allowCreate: false, manager: store.managerName(req) },
  );
  store.reply(req, res, 200, out.object);
}

export async function serveSubresource(store: GenericStore, req: ApiRequest, res: ApiResponse): Promise<void> {
  const scope: WriteScope = { req, subresource: req.info.subresource, dryRun: dryRunOf(req.query), records: [] };
  switch (req.info.subresource) {
    case 'scale':
      return scale(store, req, res, scope);
    case 'binding':
      return binding(store, req, res, scope);
    case 'eviction':
      return eviction(store, req, res, scope);
    case 'finalize':
      return finalize(store, req, res, scope);
  }
}
