// One store for every kind (Kubernetes' registry/generic/registry.Store): the verbs on a resource and its
// subresources, each the same code for every kind, the differences asked of the kind's Strategy. Reads go
// through the watch cache; every write is one store Txn (the object, its history companion, any guard).
import { stringify as toYaml } from 'yaml';
import { apiVersionOf } from '../../api/schema/registry.js';
import type { GroupVersionKind } from '../../api/schema/schema.js';
import { FieldManager, managerFromUserAgent } from '../../api/ssa/field-manager.js';
import type { AdmissionAttributes, AdmissionOperation, AdmissionRecord } from '../admission/interface.js';
import type { ApiRequest, ApiResponse, ResourceHandler } from '../handler.js';
import type { StorageErrorContext, StorageOperation } from '../storage-status.js';
import type { Companion, Storage, StoredObject, WatchOptions } from '../storage/interface.js';
import { StatusError, statuses, type GroupResource } from '../status.js';
import { create } from './create.js';
import { deleteCollection, deleteOne } from './delete.js';
import { fencingGuard } from './fencing.js';
import { serveHistory } from './history-subresource.js';
import { HistoryWriter, historyKey, type HistoryEntry } from './history.js';
import { asStatusError } from './registry-errors.js';
import { ResponseWarnings } from './response-warnings.js';
import { predicateFrom } from './selection.js';
import type { StoreContext } from './store-context.js';
import { servePodLog } from './pod-log.js';
import { reconcileKey } from './reconcile-record.js';
import { serveReconcile } from './reconcile-subresource.js';
import { serveSubresource } from './subresources.js';
import { update } from './update.js';
import type { Strategy } from './strategy.js';
import { defaultColumns, renderTable } from './table.js';

const TABLE_V1 = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const TABLE_V1BETA1 = 'application/json;as=Table;v=v1beta1;g=meta.k8s.io';
const OFFERS = ['application/json', TABLE_V1, TABLE_V1BETA1, 'application/yaml'];

export interface WriteScope {
  readonly req: ApiRequest;
  readonly subresource: string;
  readonly dryRun: boolean;
  readonly records: AdmissionRecord[];
}

function parseIntParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw new StatusError(statuses.badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`));
  return Number(v);
}

export function dryRunOf(q: URLSearchParams): boolean {
  const all = q.getAll('dryRun');
  for (const v of all) if (v !== 'All') throw new StatusError(statuses.badRequest(`Invalid dry run value: ${JSON.stringify(v)}, only "All" is supported`));
  return all.length > 0;
}

export class GenericStore implements ResourceHandler {
  readonly gvk: GroupVersionKind;
  readonly groupResource: GroupResource;
  /** `<prefix>/<resource>/`. */
  readonly resourcePrefix: string;
  readonly history: HistoryWriter;
  private readonly managers = new Map<string, FieldManager>();
  /** Each request's Warning headers, for admission to add to (webhooks' warnings). */
  private readonly warnings = new WeakMap<ApiRequest, ResponseWarnings>();

  constructor(
    readonly strategy: Strategy,
    /** The watch cache in front of the store (or the store itself). */
    readonly storage: Storage,
    readonly ctx: StoreContext,
  ) {
    const d = strategy.descriptor;
    this.gvk = { group: d.group, version: d.version, kind: d.kind };
    this.groupResource = { group: d.group, resource: d.resource };
    this.resourcePrefix = `${ctx.etcdPrefix}/${strategy.storageResource ?? d.resource}/`;
    this.history = new HistoryWriter(ctx.raw);
  }

  key(namespace: string, name: string): string {
    return this.strategy.descriptor.namespaced ? `${this.resourcePrefix}${namespace}/${name}` : `${this.resourcePrefix}${name}`;
  }

  historyKey(namespace: string, name: string): string {
    return historyKey(this.ctx.etcdPrefix, this.strategy.storageResource ?? this.strategy.descriptor.resource, namespace, name);
  }

  /** The loops' records beside the object (reconcile-record.ts). */
  reconcileKey(namespace: string, name: string): string {
    return reconcileKey(this.ctx.etcdPrefix, this.strategy.storageResource ?? this.strategy.descriptor.resource, namespace, name);
  }

  /** What the Txn that removes the object also removes: its history and its loops' records. */
  deletionCompanions(namespace: string, name: string): Companion[] {
    return [this.history.deletion(this.historyKey(namespace, name)), { key: this.reconcileKey(namespace, name), value: null }];
  }

  fieldManager(subresource: string): FieldManager {
    let fm = this.managers.get(subresource);
    if (!fm) {
      const reset = this.strategy.hasStatus ? (subresource === 'status' ? [['spec'], ['metadata']] : [['status']]) : [];
      fm = new FieldManager({ registry: this.ctx.schemas, gvk: this.gvk, subresource, resetFields: reset, now: this.ctx.now });
      this.managers.set(subresource, fm);
    }
    return fm;
  }

  managerName(req: ApiRequest): string {
    const m = req.query.get('fieldManager');
    if (m !== null && m !== '') return m;
    return managerFromUserAgent(req.headers['user-agent'] ?? 'unknown');
  }

  storageCtx(name: string, operation: StorageOperation): StorageErrorContext {
    return { resource: this.groupResource, name, operation };
  }

  async serve(req: ApiRequest, raw: ApiResponse): Promise<void> {
    const info = req.info;
    const op = operationOf(info.verb);
    const res = new ResponseWarnings(raw);
    this.warnings.set(req, res);
    try {
      const sub = info.subresource;
      if (sub === 'scale' || sub === 'binding' || sub === 'eviction' || sub === 'finalize') {
        await serveSubresource(this, req, res);
        return;
      }
      if (sub === 'history') {
        await serveHistory(this, req, res);
        return;
      }
      if (sub === 'reconcile') {
        await serveReconcile(this, req, res);
        return;
      }
      if (sub === 'log' && this.groupResource.group === '' && this.groupResource.resource === 'pods') {
        await servePodLog(this, req, res, this.ctx.kubeletClient);
        return;
      }
      switch (info.verb) {
        case 'get':
          return await this.get(req, res);
        case 'list':
          return await this.list(req, res);
        case 'watch':
          return await this.watch(req, res);
        case 'create':
          return await create(this, req, res);
        case 'update':
        case 'patch':
          return await update(this, req, res);
        case 'delete':
          return await deleteOne(this, req, res);
        case 'deletecollection':
          return await deleteCollection(this, req, res);
        default:
          res.status(statuses.methodNotSupported(this.groupResource, info.verb));
      }
    } catch (e) {
      res.error(asStatusError(e), this.storageCtx(info.name, op));
    }
  }

  /** An object from the store as this kind's API shows it. */
  present(o: StoredObject): StoredObject {
    return this.strategy.convert && o.kind !== 'Status' ? this.strategy.convert.fromStored(o) : o;
  }

  /** An object of this kind's API as the store keeps it. */
  toStored(o: StoredObject): StoredObject {
    return this.strategy.convert ? this.strategy.convert.toStored(o) : o;
  }

  /** The representation the client asked for; throws 406 when none is acceptable. */
  representation(req: ApiRequest): string {
    const ct = req.negotiate(OFFERS);
    if (ct === undefined) throw new StatusError(statuses.notAcceptable(['application/json', 'application/yaml']));
    return ct;
  }

  isTable(ct: string): boolean {
    return ct === TABLE_V1 || ct === TABLE_V1BETA1;
  }

  tableOf(req: ApiRequest, ct: string, objs: readonly StoredObject[], listMeta: Record<string, unknown>): Record<string, unknown> {
    const include = req.query.get('includeObject');
    const table = renderTable(
      this.strategy.columns ?? defaultColumns,
      objs,
      listMeta,
      { includeObject: include === 'None' || include === 'Object' ? include : 'Metadata', noHeaders: req.query.get('noHeaders') === 'true' },
      this.ctx.now().getTime(),
    );
    if (ct === TABLE_V1BETA1) table['apiVersion'] = 'meta.k8s.io/v1beta1';
    return table;
  }

  /** Answers one object as JSON, YAML or a one-row Table. */
  reply(req: ApiRequest, res: ApiResponse, code: number, obj: StoredObject | Record<string, unknown>): void {
    const ct = this.representation(req);
    if (this.isTable(ct) && (obj as StoredObject).kind === this.gvk.kind) {
      const o = obj as StoredObject;
      res.object(code, this.tableOf(req, ct, [o], { resourceVersion: o.metadata.resourceVersion ?? '' }), ct);
    } else if (ct === 'application/yaml') {
      res.object(code, toYaml(obj), ct);
    } else {
      res.object(code, obj);
    }
  }

  async get(req: ApiRequest, res: ApiResponse): Promise<void> {
    const { namespace, name } = req.info;
    const rv = req.query.get('resourceVersion') ?? '';
    const obj = await this.storage.get(this.key(namespace, name), rv === '' ? {} : { resourceVersion: rv });
    this.reply(req, res, 200, this.present(obj));
  }

  listPrefix(namespace: string): string {
    return this.strategy.descriptor.namespaced && namespace !== '' ? `${this.resourcePrefix}${namespace}/` : this.resourcePrefix;
  }

  async list(req: ApiRequest, res: ApiResponse): Promise<void> {
    const q = req.query;
    const ct = this.representation(req);
    const predicate = predicateFrom(this.strategy, q);
    const limit = parseIntParam(q, 'limit');
    const rv = q.get('resourceVersion') ?? '';
    const rvm = q.get('resourceVersionMatch') ?? '';
    if (rvm !== '' && rvm !== 'NotOlderThan' && rvm !== 'Exact') {
      throw new StatusError(statuses.badRequest(`resourceVersionMatch: Unsupported value: "${rvm}": supported values: "Exact", "NotOlderThan"`));
    }
    if (rvm !== '' && rv === '') throw new StatusError(statuses.badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided'));
    const cont = q.get('continue') ?? '';
    const result = await this.storage.list(this.listPrefix(req.info.namespace), {
      ...(rv !== '' ? { resourceVersion: rv } : {}),
      ...(rvm !== '' ? { resourceVersionMatch: rvm as 'NotOlderThan' | 'Exact' } : {}),
      ...(limit !== undefined && limit > 0 ? { limit } : {}),
      ...(cont !== '' ? { continue: cont } : {}),
      predicate,
    });
    const items = result.items.map((o) => this.present(o));
    const meta: Record<string, unknown> = {
      resourceVersion: result.resourceVersion,
      ...(result.continue ? { continue: result.continue } : {}),
      ...(result.remainingItemCount !== undefined ? { remainingItemCount: result.remainingItemCount } : {}),
    };
    if (this.isTable(ct)) {
      res.object(200, this.tableOf(req, ct, items, meta), ct);
      return;
    }
    const body = {
      kind: `${this.gvk.kind}List`,
      apiVersion: apiVersionOf(this.gvk),
      metadata: meta,
      // Typed lists carry no kind and apiVersion on their items.
      items: items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest),
    };
    if (ct === 'application/yaml') res.object(200, toYaml(body), ct);
    else res.object(200, body);
  }

  async watch(req: ApiRequest, res: ApiResponse): Promise<void> {
    const q = req.query;
    const ct = this.representation(req);
    const predicate = predicateFrom(this.strategy, q);
    const rv = q.get('resourceVersion') ?? '';
    const timeout = parseIntParam(q, 'timeoutSeconds');
    const timeoutSeconds = timeout !== undefined && timeout > 0 ? timeout : req.watchTimeoutMs !== undefined ? Math.ceil(req.watchTimeoutMs / 1000) : undefined;
    const opts: WatchOptions = {
      ...(rv !== '' ? { resourceVersion: rv } : {}),
      predicate,
      allowBookmarks: q.get('allowWatchBookmarks') === 'true',
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    };
    const { namespace, name } = req.info;
    const w = this.storage.watch(name !== '' ? this.key(namespace, name) : this.listPrefix(namespace), opts);
    const table = this.isTable(ct);
    const stream = res.watch(table ? ct : ct === 'application/yaml' ? 'application/json' : undefined);
    const stop = (): void => w.stop();
    req.signal.addEventListener('abort', stop, { once: true });
    stream.signal.addEventListener('abort', stop, { once: true });
    try {
      for await (const ev of w) {
        const isObject = ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED';
        const shown = isObject ? this.present(ev.object) : ev.object;
        const object = table && isObject ? this.tableOf(req, ct, [shown], { resourceVersion: shown.metadata.resourceVersion ?? '' }) : shown;
        await stream.send({ type: ev.type, object });
        if (ev.type === 'ERROR') break;
      }
    } finally {
      w.stop();
      req.signal.removeEventListener('abort', stop);
      stream.end();
    }
  }

  /** The fencing guard a write carries (Setpoint-Fencing-Token), checked against its Lease now. */
  async guards(req: ApiRequest): Promise<{ key: string; modRevision: number }[]> {
    const token = req.headers['setpoint-fencing-token'];
    if (token === undefined || token === '') return [];
    return [await fencingGuard(this.ctx, token)];
  }

  attributes(scope: WriteScope, operation: AdmissionOperation, object: StoredObject | undefined, oldObject: StoredObject | undefined): AdmissionAttributes {
    const { req } = scope;
    const kind = this.gvk;
    return {
      operation,
      resource: { group: kind.group, version: kind.version, resource: this.strategy.descriptor.resource },
      subresource: scope.subresource,
      kind,
      namespace: req.info.namespace,
      name: object?.metadata.name ?? oldObject?.metadata.name ?? req.info.name,
      ...(object !== undefined ? { object } : {}),
      ...(oldObject !== undefined ? { oldObject } : {}),
      dryRun: scope.dryRun,
      user: req.user,
      signal: req.signal,
      warn: (text) => this.warnings.get(req)?.add(text),
      ...(this.strategy.defaults ? { defaults: (o: StoredObject) => this.strategy.defaults?.(o) } : {}),
    };
  }

  historyEntry(scope: WriteScope, operation: 'CREATE' | 'UPDATE' | 'DELETE', fromRv: string, allowed: boolean, message?: string): HistoryEntry {
    return {
      time: new Date(this.ctx.now().getTime()).toISOString(),
      operation,
      subresource: scope.subresource,
      user: scope.req.user.name,
      allowed,
      ...(message !== undefined ? { message } : {}),
      fromResourceVersion: fromRv,
      records: [...scope.records],
    };
  }

  /** A refused write leaves its record alone (not on a dry run: nothing of a dry run is stored). */
  async recordRefusal(scope: WriteScope, operation: 'CREATE' | 'UPDATE' | 'DELETE', namespace: string, name: string, err: unknown): Promise<void> {
    if (scope.dryRun || name === '') return;
    const s = err instanceof StatusError ? err.status : undefined;
    if (s === undefined || (s.code !== 422 && s.code !== 403 && s.reason !== 'Invalid' && scope.records.every((r) => r.allowed))) return;
    // A create in a namespace that does not exist has no place for a history: nothing would ever remove it.
    if (s.code === 404) return;
    await this.history.recordAlone(this.historyKey(namespace, name), name, this.historyEntry(scope, operation, '', false, s.message));
  }
}

function operationOf(verb: string): StorageOperation {
  switch (verb) {
    case 'get':
    case 'list':
    case 'watch':
    case 'create':
    case 'update':
    case 'delete':
      return verb;
    case 'patch':
      return 'update';
    case 'deletecollection':
      return 'delete';
    default:
      return 'get';
  }
}
