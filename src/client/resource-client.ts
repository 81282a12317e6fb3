// Typed helpers for one resource: the URLs Kubernetes serves it at (core under /api/v1, groups under
// /apis/<group>/<version>, namespaced or not) and every verb, subresources included.
import type { KubeList, KubeObject } from './kube-object.js';
import type { Query, RestClient } from './rest-client.js';
import type { WatchEvent } from './watch-decoder.js';

export interface ResourceType {
  readonly group: string;
  readonly version: string;
  /** Plural, lower-case: `pods`. */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface ListOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  readonly timeoutMs?: number;
}

export interface WatchOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
  readonly timeoutSeconds?: number;
  readonly signal: AbortSignal;
}

export interface WriteOptions {
  readonly fieldManager?: string;
  readonly fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  readonly dryRun?: boolean;
  readonly force?: boolean;
}

export interface DeleteOptions {
  readonly gracePeriodSeconds?: number;
  readonly propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  readonly preconditions?: { uid?: string; resourceVersion?: string };
  readonly dryRun?: boolean;
}

export function apiVersionOf(t: Pick<ResourceType, 'group' | 'version'>): string {
  return t.group === '' ? t.version : `${t.group}/${t.version}`;
}

function writeQuery(o: WriteOptions | undefined): Query {
  return { fieldManager: o?.fieldManager, fieldValidation: o?.fieldValidation, dryRun: o?.dryRun ? 'All' : undefined, force: o?.force };
}

export class ResourceClient<T extends KubeObject = KubeObject> {
  constructor(
    readonly rest: RestClient,
    readonly type: ResourceType,
  ) {}

  /** The collection URL; an empty namespace on a namespaced resource means all namespaces. */
  path(namespace = '', name?: string, subresource?: string): string {
    const t = this.type;
    let p = t.group === '' ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
    if (t.namespaced && namespace !== '') p += `/namespaces/${encodeURIComponent(namespace)}`;
    p += `/${t.resource}`;
    if (name !== undefined) p += `/${encodeURIComponent(name)}`;
    if (subresource !== undefined) p += `/${subresource}`;
    return p;
  }

  /** The body with kind and apiVersion filled in (client-node leaves them out; the server needs them to match). */
  private typed(obj: T): T {
    return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(this.type), kind: obj.kind ?? this.type.kind };
  }

  private nsOf(obj: KubeObject, namespace?: string): string {
    return namespace ?? obj.metadata?.namespace ?? '';
  }

  get(namespace: string, name: string): Promise<T> {
    return this.rest.request<T>({ path: this.path(namespace, name) });
  }

  list(namespace = '', o: ListOptions = {}): Promise<KubeList<T>> {
    const { timeoutMs, ...q } = o;
    return this.rest.request<KubeList<T>>({ path: this.path(namespace), query: q, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
  }

  /** Every page of a list (following `continue`), with the first page's resourceVersion. */
  async listAll(namespace = '', o: Omit<ListOptions, 'continue'> = {}): Promise<KubeList<T>> {
    const first = await this.list(namespace, o);
    const items = [...first.items];
    let cont = first.metadata.continue;
    while (cont) {
      const page = await this.list(namespace, { ...o, continue: cont });
      items.push(...page.items);
      cont = page.metadata.continue;
    }
    return { ...first, metadata: { ...first.metadata, continue: '' }, items };
  }

  watch(namespace: string, o: WatchOptions): AsyncGenerator<WatchEvent<T>> {
    const { signal, allowWatchBookmarks, ...q } = o;
    return this.rest.watch<T>({ path: this.path(namespace), query: { ...q, allowWatchBookmarks: allowWatchBookmarks ? 'true' : undefined }, signal });
  }

  create(obj: T, o?: WriteOptions & { namespace?: string }): Promise<T> {
    return this.rest.request<T>({ method: 'POST', path: this.path(this.nsOf(obj, o?.namespace)), query: writeQuery(o), body: this.typed(obj) });
  }

  update(obj: T, o?: WriteOptions): Promise<T> {
    return this.rest.request<T>({ method: 'PUT', path: this.path(this.nsOf(obj), obj.metadata?.name ?? ''), query: writeQuery(o), body: this.typed(obj) });
  }

  patch(namespace: string, name: string, type: PatchType, patch: unknown, o?: WriteOptions & { subresource?: string }): Promise<T> {
    return this.rest.request<T>({
      method: 'PATCH',
      path: this.path(namespace, name, o?.subresource),
      query: writeQuery(o),
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
    });
  }

  /** Server-side apply of a whole manifest. */
  apply(obj: T, fieldManager: string, o?: { force?: boolean; dryRun?: boolean }): Promise<T> {
    return this.patch(this.nsOf(obj), obj.metadata?.name ?? '', 'apply', this.typed(obj), { fieldManager, ...o });
  }

  delete(namespace: string, name: string, o: DeleteOptions = {}): Promise<unknown> {
    return this.rest.request({ method: 'DELETE', path: this.path(namespace, name), body: deleteBody(o), query: o.dryRun ? { dryRun: 'All' } : {} });
  }

  deleteCollection(namespace: string, o: DeleteOptions & Pick<ListOptions, 'labelSelector' | 'fieldSelector'> = {}): Promise<unknown> {
    return this.rest.request({
      method: 'DELETE',
      path: this.path(namespace),
      query: { labelSelector: o.labelSelector, fieldSelector: o.fieldSelector, dryRun: o.dryRun ? 'All' : undefined },
      body: deleteBody(o),
    });
  }

  getStatus(namespace: string, name: string): Promise<T> {
    return this.rest.request<T>({ path: this.path(namespace, name, 'status') });
  }

  updateStatus(obj: T, o?: WriteOptions): Promise<T> {
    return this.rest.request<T>({ method: 'PUT', path: this.path(this.nsOf(obj), obj.metadata?.name ?? '', 'status'), query: writeQuery(o), body: this.typed(obj) });
  }

  patchStatus(namespace: string, name: string, type: PatchType, patch: unknown, o?: WriteOptions): Promise<T> {
    return this.patch(namespace, name, type, patch, { ...o, subresource: 'status' });
  }

  getScale(namespace: string, name: string): Promise<Scale> {
    return this.rest.request<Scale>({ path: this.path(namespace, name, 'scale') });
  }

  updateScale(namespace: string, name: string, replicas: number, o?: WriteOptions): Promise<Scale> {
    const body: Scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name, namespace }, spec: { replicas } };
    return this.rest.request<Scale>({ method: 'PUT', path: this.path(namespace, name, 'scale'), query: writeQuery(o), body });
  }

  patchScale(namespace: string, name: string, replicas: number): Promise<Scale> {
    return this.rest.request<Scale>({ method: 'PATCH', path: this.path(namespace, name, 'scale'), body: { spec: { replicas } }, contentType: PATCH_CONTENT_TYPES.merge });
  }

  /** pods/binding: the scheduler's write. */
  bind(namespace: string, name: string, nodeName: string, o?: WriteOptions & { uid?: string }): Promise<unknown> {
    const body = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace, ...(o?.uid ? { uid: o.uid } : {}) },
      target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
    };
    return this.rest.request({ method: 'POST', path: this.path(namespace, name, 'binding'), query: writeQuery(o), body });
  }

  /** pods/eviction (policy/v1). */
  evict(namespace: string, name: string, o: DeleteOptions = {}): Promise<unknown> {
    const body = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, deleteOptions: deleteBody(o) };
    return this.rest.request({ method: 'POST', path: this.path(namespace, name, 'eviction'), body });
  }
}

export interface Scale extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

function deleteBody(o: DeleteOptions): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    ...(o.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: o.gracePeriodSeconds } : {}),
    ...(o.propagationPolicy ? { propagationPolicy: o.propagationPolicy } : {}),
    ...(o.preconditions ? { preconditions: o.preconditions } : {}),
    ...(o.dryRun ? { dryRun: ['All'] } : {}),
  };
}
