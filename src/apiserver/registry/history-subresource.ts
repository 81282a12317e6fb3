// NAME/history: the read-only subresource that serves an object's admission history (history.ts) to
// clients, so `setpoint why` reads it through the API server like everything else instead of from the store.
// Setpoint's own, not a Kubernetes API; every kind the registry serves gets it (docs/why-records.md).
import type { ApiRequest, ApiResponse } from '../handler.js';
import type { ResourceDescriptor, SubresourceDescriptor } from '../resource-registry.js';
import { StorageError } from '../storage/interface.js';
import { StatusError, groupResourceString, makeStatus, statuses } from '../status.js';
import type { GenericStore } from './generic-store.js';
import { HISTORY_LIMIT } from './history.js';

export const HISTORY_SUBRESOURCE: SubresourceDescriptor = {
  name: 'history',
  kind: { group: 'setpoint.io', version: 'v1', kind: 'HistoryRecordList' },
  verbs: ['get'],
};

/** What one answer may carry: the oldest entries go first when a history's messages are huge. */
export const HISTORY_MAX_BYTES = 512 * 1024;

/** The kind's descriptor with the history subresource added (once), as the registry registers it. */
export function withHistory(d: ResourceDescriptor): ResourceDescriptor {
  if (d.subresources.some((s) => s.name === HISTORY_SUBRESOURCE.name)) return d;
  return { ...d, subresources: [...d.subresources, HISTORY_SUBRESOURCE] };
}

/** The newest entries of `entries` whose JSON fits in `maxBytes` (at most HISTORY_LIMIT of them). */
export function boundEntries(entries: readonly unknown[], maxBytes = HISTORY_MAX_BYTES): unknown[] {
  const out: unknown[] = [];
  let bytes = 0;
  for (let i = entries.length - 1; i >= 0 && out.length < HISTORY_LIMIT; i--) {
    const size = Buffer.byteLength(JSON.stringify(entries[i])) + 1;
    if (bytes + size > maxBytes) break;
    bytes += size;
    out.unshift(entries[i]);
  }
  return out;
}

/** 404 for a companion record that is not there: `pods "web-0" has no history`. */
export function noCompanion(store: GenericStore, name: string, what: string): StatusError {
  return new StatusError(
    makeStatus(404, 'NotFound', `${groupResourceString(store.groupResource)} ${JSON.stringify(name)} has no ${what}`, {
      name,
      group: store.groupResource.group,
      kind: store.groupResource.resource,
    }),
  );
}

export async function serveHistory(store: GenericStore, req: ApiRequest, res: ApiResponse): Promise<void> {
  if (req.info.verb !== 'get') throw new StatusError(statuses.methodNotSupported(store.groupResource, req.info.verb));
  const { namespace, name } = req.info;
  const ns = store.strategy.descriptor.namespaced ? namespace : '';
  const noHistory = (): StatusError => noCompanion(store, name, 'history');
  let doc;
  try {
    // From the store itself (a quorum read), not a watch cache: history keys have none.
    doc = await store.ctx.raw.get(store.historyKey(ns, name));
  } catch (e) {
    if (e instanceof StorageError && e.code === 'NotFound') throw noHistory();
    throw e;
  }
  const entries = Array.isArray(doc['entries']) ? (doc['entries'] as unknown[]) : [];
  if (entries.length === 0) throw noHistory();
  res.object(200, {
    apiVersion: `${HISTORY_SUBRESOURCE.kind.group}/${HISTORY_SUBRESOURCE.kind.version}`,
    kind: HISTORY_SUBRESOURCE.kind.kind,
    metadata: { name, ...(ns !== '' ? { namespace: ns } : {}), resourceVersion: doc.metadata.resourceVersion ?? '' },
    items: boundEntries(entries),
  });
}
