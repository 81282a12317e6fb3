// DELETE and deletecollection, as Kubernetes' store does them: DeleteOptions from the body or the query
// (gracePeriodSeconds, preconditions, propagationPolicy, dryRun); an object with finalizers, or one whose
// kind deletes gracefully (a pod on a node, a namespace), gets deletionTimestamp and stays; Orphan and
// Foreground add their finalizer for the garbage collector; everything else is removed in one Txn with its
// history.
import type { ApiRequest, ApiResponse } from '../handler.js';
import { NO_CHANGE, type Preconditions, type StoredObject } from '../storage/interface.js';
import { StatusError, statuses } from '../status.js';
import { parseText } from './body.js';
import { dryRunOf, type GenericStore, type WriteScope } from './generic-store.js';
import { predicateFrom } from './selection.js';
import { rfc3339 } from './store-context.js';
import { deepCopy } from './strategy.js';

export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

export interface DeleteOpts {
  readonly gracePeriodSeconds?: number;
  readonly preconditions?: Preconditions;
  readonly propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
}

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function deleteOptionsOf(req: ApiRequest, text: string): DeleteOpts {
  const body = text.trim() === '' ? {} : asRecord(parseText(text, req.contentType, { group: 'meta.k8s.io', version: 'v1', kind: 'DeleteOptions' }));
  const q = req.query;
  const graceQ = q.get('gracePeriodSeconds');
  const grace = graceQ !== null && graceQ !== '' ? Number(graceQ) : typeof body['gracePeriodSeconds'] === 'number' ? body['gracePeriodSeconds'] : undefined;
  if (grace !== undefined && !Number.isInteger(grace)) throw new StatusError(statuses.badRequest(`invalid gracePeriodSeconds: ${String(graceQ)}`));
  const policy = q.get('propagationPolicy') ?? (typeof body['propagationPolicy'] === 'string' ? body['propagationPolicy'] : undefined);
  const orphanQ = q.get('orphanDependents');
  const orphan = orphanQ !== null ? orphanQ === 'true' : typeof body['orphanDependents'] === 'boolean' ? body['orphanDependents'] : undefined;
  if (policy !== undefined && policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
    throw new StatusError(statuses.badRequest(`DeleteOptions.propagationPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`));
  }
  if (policy !== undefined && orphan !== undefined) {
    throw new StatusError(statuses.badRequest('DeleteOptions.propagationPolicy: Invalid value: "' + policy + '": orphanDependents and deletionPropagation cannot be both set'));
  }
  const pre = asRecord(body['preconditions']);
  const preconditions: Preconditions = {
    ...(typeof pre['uid'] === 'string' ? { uid: pre['uid'] } : {}),
    ...(typeof pre['resourceVersion'] === 'string' ? { resourceVersion: pre['resourceVersion'] } : {}),
  };
  const propagation = policy ?? (orphan === true ? 'Orphan' : orphan === false ? 'Foreground' : undefined);
  return {
    ...(grace !== undefined ? { gracePeriodSeconds: Math.max(0, grace) } : {}),
    ...(Object.keys(preconditions).length > 0 ? { preconditions } : {}),
    ...(propagation !== undefined ? { propagationPolicy: propagation as 'Orphan' | 'Background' | 'Foreground' } : {}),
  };
}

/** Deletes one object; returns what it answers with (the object, or what remains of it) and whether it is gone. */
export async function deleteObject(store: GenericStore, scope: WriteScope, namespace: string, name: string, opts: DeleteOpts): Promise<{ object: StoredObject; gone: boolean }> {
  const key = store.key(namespace, name);
  const guards = await store.guards(scope.req);
  let gone = false;
  const result = await store.storage.guaranteedUpdate(
    key,
    { dryRun: scope.dryRun, guards, ...(opts.preconditions ? { preconditions: opts.preconditions } : {}) },
    async (current) => {
      if (current === undefined) throw new StatusError(statuses.notFound(store.groupResource, name));
      scope.records.length = 0;
      const attrs = store.attributes(scope, 'DELETE', undefined, current);
      await store.ctx.admission.admit(attrs, scope.records);
      await store.ctx.admission.validate(attrs, scope.records);
      const now = rfc3339(store.ctx.now());
      const next = deepCopy(current) as StoredObject;
      const m = next.metadata;
      const finalizers = new Set(Array.isArray(m['finalizers']) ? (m['finalizers'] as string[]) : []);
      if (opts.propagationPolicy === 'Orphan') finalizers.add(ORPHAN_FINALIZER);
      if (opts.propagationPolicy === 'Foreground') finalizers.add(FOREGROUND_FINALIZER);
      if (opts.propagationPolicy === 'Background') {
        finalizers.delete(ORPHAN_FINALIZER);
        finalizers.delete(FOREGROUND_FINALIZER);
      }
      const graceful = store.strategy.gracefulDelete?.(next, opts.gracePeriodSeconds, now);
      if (finalizers.size === 0 && graceful === undefined) {
        gone = true;
        return NO_CHANGE;
      }
      const out = graceful ?? next;
      if (!out.metadata['deletionTimestamp']) out.metadata['deletionTimestamp'] = now;
      if (graceful === undefined && out.metadata['deletionGracePeriodSeconds'] === undefined) out.metadata['deletionGracePeriodSeconds'] = 0;
      if (finalizers.size > 0) out.metadata['finalizers'] = [...finalizers];
      return out;
    },
  );
  if (!gone) return { object: store.present(result.object), gone: false };
  const deleted = await store.storage.delete(key, {
    dryRun: scope.dryRun,
    guards,
    preconditions: { ...opts.preconditions, ...(result.object.metadata.uid ? { uid: result.object.metadata.uid } : {}) },
    companions: scope.dryRun ? [] : store.deletionCompanions(namespace, name),
  });
  return { object: store.present(deleted), gone: true };
}

function successStatus(store: GenericStore, obj: StoredObject): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: obj.metadata.name ?? '', group: store.groupResource.group, kind: store.groupResource.resource, uid: obj.metadata.uid ?? '' },
  };
}

export async function deleteOne(store: GenericStore, req: ApiRequest, res: ApiResponse): Promise<void> {
  const dryRun = dryRunOf(req.query);
  const opts = deleteOptionsOf(req, (await req.body()).toString('utf8'));
  const scope: WriteScope = { req, subresource: '', dryRun, records: [] };
  const { namespace, name } = req.info;
  let out;
  try {
    out = await deleteObject(store, scope, namespace, name, opts);
  } catch (e) {
    await store.recordRefusal(scope, 'DELETE', namespace, name, e);
    throw e;
  }
  if (out.gone && !store.strategy.returnDeletedObject) res.object(200, successStatus(store, out.object));
  else store.reply(req, res, 200, out.object);
}

export async function deleteCollection(store: GenericStore, req: ApiRequest, res: ApiResponse): Promise<void> {
  const dryRun = dryRunOf(req.query);
  const opts = deleteOptionsOf(req, (await req.body()).toString('utf8'));
  const predicate = predicateFrom(store.strategy, req.query);
  const list = await store.storage.list(store.listPrefix(req.info.namespace), { predicate });
  const items: StoredObject[] = [];
  for (const o of list.items) {
    const scope: WriteScope = { req, subresource: '', dryRun, records: [] };
    try {
      const out = await deleteObject(store, scope, o.metadata.namespace ?? '', o.metadata.name ?? '', opts);
      items.push(out.object);
    } catch (e) {
      // Gone in between: someone else deleted it, which is what was asked.
      if (!(e instanceof StatusError && e.status.code === 404) && !(e instanceof Error && 'code' in e && e.code === 'NotFound')) throw e;
    }
  }
  res.object(200, {
    kind: `${store.gvk.kind}List`,
    apiVersion: store.gvk.group === '' ? store.gvk.version : `${store.gvk.group}/${store.gvk.version}`,
    metadata: { resourceVersion: list.resourceVersion },
    items: items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest),
  });
}
