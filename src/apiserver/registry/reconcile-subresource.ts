// NAME/reconcile: the loops' records for `setpoint why` (reconcile-record.ts), written and read through the API
// server like everything else. A PUT of a ReconcileReport replaces its controller's record; a GET answers all
// the object's records. Setpoint's own, not a Kubernetes API; every kind the registry serves has it.
import type { ApiRequest, ApiResponse } from '../handler.js';
import type { ResourceDescriptor, SubresourceDescriptor } from '../resource-registry.js';
import { StorageError, type Guard } from '../storage/interface.js';
import { StatusError, statuses } from '../status.js';
import { checkTypeMeta, parseText } from './body.js';
import { dryRunOf, type GenericStore } from './generic-store.js';
import { noCompanion } from './history-subresource.js';
import { RECORD_MAX_BYTES, nextRecord, parseReport, recordBytes, withRecord, type ReconcileDocument } from './reconcile-record.js';

export const RECONCILE_SUBRESOURCE: SubresourceDescriptor = {
  name: 'reconcile',
  kind: { group: 'setpoint.io', version: 'v1', kind: 'ReconcileRecordList' },
  verbs: ['get', 'update'],
};

const REPORT_GVK = { group: 'setpoint.io', version: 'v1', kind: 'ReconcileReport' };

/** The kind's descriptor with the reconcile subresource added (once), as the registry registers it. */
export function withReconcile(d: ResourceDescriptor): ResourceDescriptor {
  if (d.subresources.some((s) => s.name === RECONCILE_SUBRESOURCE.name)) return d;
  return { ...d, subresources: [...d.subresources, RECONCILE_SUBRESOURCE] };
}

function isNotFound(e: unknown): boolean {
  return e instanceof StorageError && e.code === 'NotFound';
}

/**
 * The write lands only while the object exists (and is the one the loop looked at): guarded on its
 * mod_revision, checked again when the object moved meanwhile, so a record never outlives its object.
 */
async function objectGuard(store: GenericStore, namespace: string, name: string, uid: string | undefined): Promise<Guard> {
  const key = store.key(namespace, name);
  let o;
  try {
    o = await store.ctx.raw.get(key);
  } catch (e) {
    if (isNotFound(e)) throw new StatusError(statuses.notFound(store.groupResource, name));
    throw e;
  }
  if (uid !== undefined && o.metadata.uid !== uid) {
    throw new StatusError(statuses.conflict(store.groupResource, name, `the report is about uid ${uid}, the object is uid ${o.metadata.uid ?? ''} now`));
  }
  return { key, modRevision: Number(o.metadata.resourceVersion), refresh: () => objectGuard(store, namespace, name, uid) };
}

async function put(store: GenericStore, req: ApiRequest, res: ApiResponse, ns: string, name: string): Promise<void> {
  const body = checkTypeMeta(parseText((await req.body()).toString('utf8'), req.contentType, REPORT_GVK), REPORT_GVK);
  const parsed = parseReport(body);
  if ('problems' in parsed) throw new StatusError(statuses.invalid(REPORT_GVK, name, parsed.problems));
  const report = parsed.report;
  const dryRun = dryRunOf(req.query);
  const guards = [...(await store.guards(req)), await objectGuard(store, ns, name, report.uid)];
  const now = new Date(store.ctx.now().getTime()).toISOString();
  let written: ReturnType<typeof nextRecord> | undefined;
  const result = await store.ctx.raw.guaranteedUpdate(store.reconcileKey(ns, name), { allowCreate: true, dryRun, guards }, async (cur) => {
    const doc = cur as ReconcileDocument | undefined;
    const prev = doc?.records.find((r) => r.controller === report.controller);
    const rec = nextRecord(prev, report, now);
    const bytes = recordBytes(rec);
    if (bytes > RECORD_MAX_BYTES) {
      throw new StatusError(statuses.invalid(REPORT_GVK, name, [{ field: '', type: 'FieldValueTooLong', message: `Too long: may not be more than ${RECORD_MAX_BYTES} bytes (the record is ${bytes})` }]));
    }
    written = rec;
    return withRecord(doc, name, rec);
  });
  res.object(200, {
    apiVersion: 'setpoint.io/v1',
    kind: 'ReconcileRecord',
    metadata: { name, ...(ns !== '' ? { namespace: ns } : {}), resourceVersion: result.object.metadata.resourceVersion ?? '' },
    ...written,
  });
}

export async function serveReconcile(store: GenericStore, req: ApiRequest, res: ApiResponse): Promise<void> {
  const { namespace, name, verb } = req.info;
  const ns = store.strategy.descriptor.namespaced ? namespace : '';
  if (verb === 'update') return put(store, req, res, ns, name);
  if (verb !== 'get') throw new StatusError(statuses.methodNotSupported(store.groupResource, verb));
  let doc;
  try {
    // From the store itself (a quorum read), not a watch cache: record keys have none.
    doc = (await store.ctx.raw.get(store.reconcileKey(ns, name))) as ReconcileDocument;
  } catch (e) {
    if (!isNotFound(e)) throw e;
    throw noCompanion(store, name, 'reconcile records');
  }
  res.object(200, {
    apiVersion: `${RECONCILE_SUBRESOURCE.kind.group}/${RECONCILE_SUBRESOURCE.kind.version}`,
    kind: RECONCILE_SUBRESOURCE.kind.kind,
    metadata: { name, ...(ns !== '' ? { namespace: ns } : {}), resourceVersion: doc.metadata.resourceVersion ?? '' },
    items: Array.isArray(doc.records) ? doc.records : [],
  });
}
