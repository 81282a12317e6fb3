// PUT and PATCH on an object or its /status: inside the storage's guaranteedUpdate, the new object is built
// from the stored one (a PUT body, or a patch of any of the four types applied to it), the parts the
// endpoint does not own reset (status through the main resource, everything but status through /status),
// generation bumped when anything outside metadata and status changed, then the write pipeline. A stale
// resourceVersion is Kubernetes' Conflict; an update that changes nothing keeps the resourceVersion.
import { applyJSONPatch } from '../../api/patch/json-patch.js';
import { applyMergePatch } from '../../api/patch/merge-patch.js';
import { applyStrategicMergePatch } from '../../api/patch/strategic-merge-patch.js';
import type { ApiRequest, ApiResponse } from '../handler.js';
import { NO_CHANGE, StorageError, type Companion, type ReadWith, type StoredObject } from '../storage/interface.js';
import { StatusError, statuses } from '../status.js';
import { checkTypeMeta, decodeAs, fieldValidationOf, parseBody, parseText, warningHeader, type DecodedBody } from './body.js';
import { fillCreateMeta } from './create.js';
import { dryRunOf, type GenericStore, type WriteScope } from './generic-store.js';
import { asStatusError } from './registry-errors.js';
import { deepCopy } from './strategy.js';
import { admitAndValidate } from './write-pipeline.js';

type JSONObject = Record<string, unknown>;

export const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

/** The object as compared for "did anything change": without resourceVersion and managedFields' times. */
function comparable(o: StoredObject): string {
  const { resourceVersion: _rv, managedFields, ...meta } = o.metadata;
  const mf = Array.isArray(managedFields) ? managedFields.map((e) => ({ ...(e as Record<string, unknown>), time: undefined })) : managedFields;
  return JSON.stringify({ ...o, metadata: { ...meta, managedFields: mf } });
}

function outsideMetaAndStatus(o: StoredObject): string {
  const { metadata: _m, status: _s, ...rest } = o;
  return JSON.stringify(rest);
}

/** Keeps what this endpoint may not change, from the stored object. */
export function resetForEndpoint(store: GenericStore, subresource: string, next: StoredObject, old: StoredObject): StoredObject {
  if (subresource === 'status') {
    // Only status moves through /status; metadata as stored, save what clients own there anyway.
    const out = deepCopy(old) as StoredObject;
    out['status'] = next['status'];
    const rv = next.metadata.resourceVersion ?? old.metadata.resourceVersion;
    if (rv !== undefined) out.metadata.resourceVersion = rv;
    if (next.metadata['managedFields'] !== undefined) out.metadata['managedFields'] = next.metadata['managedFields'];
    return out;
  }
  // Subresources that write their parent (binding, finalize) own what they set; the main resource not status.
  if (subresource === '' && store.strategy.hasStatus) next['status'] = deepCopy(old['status']);
  const m = next.metadata;
  const om = old.metadata;
  // Server-owned fields a client left out come from the stored object (BeforeUpdate); changing them is invalid.
  for (const f of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
    if ((m[f] === undefined || m[f] === null || m[f] === '') && om[f] !== undefined) (m as Record<string, unknown>)[f] = om[f];
  }
  if ((m.resourceVersion === undefined || m.resourceVersion === '') && om.resourceVersion !== undefined) m.resourceVersion = om.resourceVersion;
  store.strategy.prepareForUpdate?.(next, old, subresource);
  if (store.strategy.hasGeneration) {
    const g = typeof om['generation'] === 'number' ? om['generation'] : 1;
    m['generation'] = outsideMetaAndStatus(next) !== outsideMetaAndStatus(old) ? g + 1 : g;
  }
  return next;
}

type Build = (current: StoredObject | undefined) => DecodedBody | { readonly create: StoredObject } | undefined;

/** The update loop shared by PUT, PATCH and the subresources that write their parent. */
export async function updateObject(
  store: GenericStore,
  scope: WriteScope,
  namespace: string,
  name: string,
  build: Build,
  opts: { readonly allowCreate: boolean; readonly manager: string; readonly apply?: { readonly force: boolean } },
): Promise<{ object: StoredObject; created: boolean; warnings: readonly string[] }> {
  const key = store.key(namespace, name);
  let warnings: readonly string[] = [];
  let fromRv = '';
  const guards = await store.guards(scope.req);
  // Filled by each tryUpdate: the storage reads companions when it sends the Txn, after tryUpdate, so the
  // history entry (which depends on what this attempt saw and did) lands in the same Txn as the object.
  const companions: Companion[] = [];
  const hk = store.historyKey(namespace, name);
  const withHistory = (obj: StoredObject, operation: 'CREATE' | 'UPDATE', readWith: ReadWith): StoredObject => {
    companions.length = 0;
    if (!scope.dryRun) companions.push(store.history.companionOf(readWith.get(hk), hk, name, store.historyEntry(scope, operation, fromRv, true)));
    return obj;
  };
  try {
    const result = await store.storage.guaranteedUpdate(
      key,
      { allowCreate: opts.allowCreate, dryRun: scope.dryRun, guards, companions, readWith: scope.dryRun ? [] : [hk], ...(store.strategy.ttl ? { ttlSeconds: store.ctx.eventTtlSeconds } : {}) },
      async (stored, readWith) => {
        scope.records.length = 0;
        fromRv = '';
        const current = stored === undefined ? undefined : store.present(stored);
        const built = build(current);
        if (built === undefined) throw new StatusError(statuses.notFound(store.groupResource, name));
        if ('create' in built) {
          const obj = built.create;
          fillCreateMeta(store, obj, namespace);
          if (obj.metadata.name !== name) throw new StatusError(statuses.badRequest('the name of the object does not match the name on the URL'));
          const admitted = await admitAndValidate(store, scope, 'CREATE', obj, undefined);
          return withHistory(store.toStored(opts.apply ? admitted : (store.fieldManager(scope.subresource).update(undefined, admitted as JSONObject, opts.manager) as StoredObject)), 'CREATE', readWith);
        }
        if (current === undefined) throw new StatusError(statuses.notFound(store.groupResource, name));
        fromRv = current.metadata.resourceVersion ?? '';
        warnings = built.warnings;
        const next = built.object;
        const rv = next.metadata.resourceVersion;
        if (rv !== undefined && rv !== '' && rv !== current.metadata.resourceVersion) throw new StatusError(statuses.conflict(store.groupResource, name));
        if (next.metadata.name !== undefined && next.metadata.name !== name) {
          throw new StatusError(statuses.badRequest(`the name of the object (${next.metadata.name}) does not match the name on the URL (${name})`));
        }
        const reset = resetForEndpoint(store, scope.subresource, next, current);
        const admitted = await admitAndValidate(store, scope, 'UPDATE', reset, current);
        const managed = opts.apply ? admitted : (store.fieldManager(scope.subresource).update(current as JSONObject, admitted as JSONObject, opts.manager) as StoredObject);
        const toStore = store.toStored(managed);
        if (stored !== undefined && comparable(toStore) === comparable(stored)) return NO_CHANGE;
        return withHistory(toStore, 'UPDATE', readWith);
      },
    );
    // Finalizers all gone from an object being deleted (and no grace left): the update completes the delete.
    const m = result.object.metadata;
    const fin = m['finalizers'];
    const held = store.strategy.holdsDeletion?.(result.object) === true;
    if (m['deletionTimestamp'] && (!Array.isArray(fin) || fin.length === 0) && !m['deletionGracePeriodSeconds'] && !held && !scope.dryRun && !result.created) {
      try {
        const gone = await store.storage.delete(key, { preconditions: { uid: m.uid ?? '' }, companions: store.deletionCompanions(namespace, name) });
        return { object: store.present(gone), created: false, warnings };
      } catch (e) {
        if (!(e instanceof StorageError && e.code === 'NotFound')) throw e;
      }
    }
    return { object: store.present(result.object), created: result.created, warnings };
  } catch (e) {
    const err = asStatusError(e);
    await store.recordRefusal(scope, 'UPDATE', namespace, name, err);
    throw err;
  }
}

function patchOf(store: GenericStore, req: ApiRequest, text: string, current: StoredObject, patchType: string): unknown {
  const patch = parseText(text, patchType === 'application/apply-patch+yaml' ? patchType : 'application/json', store.gvk);
  const { resourceVersion: _rv, ...meta } = current.metadata;
  const base = { ...deepCopy(current), metadata: { ...deepCopy(meta), resourceVersion: current.metadata.resourceVersion } };
  try {
    switch (patchType) {
      case 'application/json-patch+json':
        return applyJSONPatch(base, patch);
      case 'application/merge-patch+json':
        return applyMergePatch(base, patch);
      case 'application/strategic-merge-patch+json': {
        const schema = store.ctx.schemas.kindSchema(store.gvk);
        if (schema === undefined) throw new Error(`no schema for ${store.gvk.kind}`);
        return applyStrategicMergePatch(store.ctx.schemas, schema, base, patch);
      }
    }
  } catch (e) {
    throw asStatusError(e);
  }
  void req;
  throw new StatusError(statuses.unsupportedMediaType(PATCH_TYPES));
}

export async function update(store: GenericStore, req: ApiRequest, res: ApiResponse): Promise<void> {
  const q = req.query;
  const dryRun = dryRunOf(q);
  const validation = fieldValidationOf(q);
  const { namespace, name } = req.info;
  const subresource = req.info.subresource;
  const scope: WriteScope = { req, subresource, dryRun, records: [] };
  const manager = store.managerName(req);
  const raw = await req.body();
  const text = raw.toString('utf8');
  let build: Build;
  let allowCreate = false;
  let apply: { force: boolean } | undefined;
  if (req.info.verb === 'update') {
    const value = parseBody(raw, req.contentType, store.gvk);
    allowCreate = store.strategy.allowCreateOnUpdate && subresource === '';
    build = (current) => {
      const d = decodeAs(store.ctx.schemas, store.gvk, deepCopy(value), validation);
      return current === undefined ? { create: d.object } : d;
    };
  } else {
    const patchType = req.contentType ?? '';
    if (!PATCH_TYPES.includes(patchType)) throw new StatusError(statuses.unsupportedMediaType(PATCH_TYPES));
    if (patchType === 'application/apply-patch+yaml') {
      const fm = q.get('fieldManager');
      if (fm === null || fm === '') throw new StatusError(statuses.badRequest('PATCH apply requires fieldManager'));
      const force = q.get('force') === 'true';
      apply = { force };
      allowCreate = subresource === '';
      const config = checkTypeMeta(parseText(text, patchType, store.gvk), store.gvk);
      const field = store.fieldManager(subresource);
      build = (current) => {
        try {
          const applied = field.apply(current as JSONObject | undefined, deepCopy(config) as JSONObject, fm, force);
          if (current === undefined) return { create: decodeAs(store.ctx.schemas, store.gvk, applied, 'Ignore').object };
          const d = decodeAs(store.ctx.schemas, store.gvk, applied, 'Ignore');
          const rv = (config['metadata'] as { resourceVersion?: string } | undefined)?.resourceVersion ?? current.metadata.resourceVersion;
          if (rv !== undefined) d.object.metadata.resourceVersion = rv;
          return d;
        } catch (e) {
          throw asStatusError(e);
        }
      };
    } else {
      build = (current) => {
        if (current === undefined) return undefined;
        const patched = patchOf(store, req, text, current, patchType);
        return decodeAs(store.ctx.schemas, store.gvk, patched, validation);
      };
    }
  }
  const out = await updateObject(store, scope, namespace, name, build, { allowCreate, manager, ...(apply ? { apply } : {}) });
  if (out.warnings.length > 0) res.setHeader('Warning', out.warnings.map(warningHeader).join(', '));
  store.reply(req, res, out.created ? 201 : 200, out.object);
}
