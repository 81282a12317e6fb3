// POST: a new object. The server owns uid, creationTimestamp, generation and resourceVersion; generateName
// becomes a name; what the client may not set (status of kinds with /status) is dropped. Whether the
// namespace exists is admission's question (NamespaceLifecycle). One Txn writes the object and its history.
import { randomUUID } from 'node:crypto';
import { generateName } from '../../api/object-meta-validation.js';
import type { ApiRequest, ApiResponse } from '../handler.js';
import { StorageError, type StoredObject } from '../storage/interface.js';
import { StatusError, statuses } from '../status.js';
import { decodeAs, fieldValidationOf, parseBody, warningHeader } from './body.js';
import { dryRunOf, type GenericStore, type WriteScope } from './generic-store.js';
import { rfc3339 } from './store-context.js';
import { admitAndValidate } from './write-pipeline.js';

type JSONObject = Record<string, unknown>;

/** Server-owned metadata of a new object, as Kubernetes' BeforeCreate sets it. */
export function fillCreateMeta(store: GenericStore, obj: StoredObject, namespace: string): void {
  const m = obj.metadata;
  if (store.strategy.descriptor.namespaced) {
    if (m.namespace !== undefined && m.namespace !== '' && namespace !== '' && m.namespace !== namespace) {
      throw new StatusError(statuses.badRequest('the namespace of the provided object does not match the namespace sent on the request'));
    }
    if (namespace !== '') m.namespace = namespace;
  } else {
    delete m.namespace;
  }
  const gen = m['generateName'];
  if ((m.name === undefined || m.name === '') && typeof gen === 'string' && gen !== '') m.name = generateName(gen, store.ctx.random);
  m.uid = randomUUID();
  m['creationTimestamp'] = rfc3339(store.ctx.now());
  delete m.resourceVersion;
  delete m['deletionTimestamp'];
  delete m['deletionGracePeriodSeconds'];
  delete m['selfLink'];
  if (store.strategy.hasGeneration) m['generation'] = 1;
  else delete m['generation'];
  if (store.strategy.hasStatus) obj['status'] = {};
  store.strategy.prepareForCreate?.(obj);
}

/** Runs a create of `obj` (already decoded), from defaults to the store. */
export async function createObject(store: GenericStore, scope: WriteScope, obj: StoredObject, namespace: string, manager: string): Promise<StoredObject> {
  fillCreateMeta(store, obj, namespace);
  const name = obj.metadata.name ?? '';
  try {
    const admitted = await admitAndValidate(store, scope, 'CREATE', obj, undefined);
    const managed = store.fieldManager(scope.subresource).update(undefined, admitted as JSONObject, manager) as StoredObject;
    const guards = await store.guards(scope.req);
    const hk = store.historyKey(namespace, name);
    const companion = scope.dryRun ? [] : [await store.history.companion(hk, name, store.historyEntry(scope, 'CREATE', '', true))];
    try {
      const stored = await store.storage.create(store.key(namespace, name), store.toStored(managed), {
        dryRun: scope.dryRun,
        guards,
        companions: companion,
        ...(store.strategy.ttl ? { ttlSeconds: store.ctx.eventTtlSeconds } : {}),
      });
      return store.present(stored);
    } catch (e) {
      if (e instanceof StorageError && e.code === 'AlreadyExists' && typeof obj.metadata['generateName'] === 'string' && obj.metadata['generateName'] !== '') {
        throw new StatusError(statuses.generateNameConflict(store.groupResource, name, 1));
      }
      if (e instanceof StorageError && e.code === 'AlreadyExists') throw new StatusError(statuses.alreadyExists(store.groupResource, name));
      throw e;
    }
  } catch (e) {
    await store.recordRefusal(scope, 'CREATE', namespace, name, e);
    throw e;
  }
}

export async function create(store: GenericStore, req: ApiRequest, res: ApiResponse): Promise<void> {
  const q = req.query;
  const dryRun = dryRunOf(q);
  const validation = fieldValidationOf(q);
  const { object, warnings } = decodeAs(store.ctx.schemas, store.gvk, parseBody(await req.body(), req.contentType, store.gvk), validation);
  if (warnings.length > 0) res.setHeader('Warning', warnings.map(warningHeader).join(', '));
  const scope: WriteScope = { req, subresource: '', dryRun, records: [] };
  const created = await createObject(store, scope, object, req.info.namespace, store.managerName(req));
  store.reply(req, res, 201, created);
}
