// client-go's thread-safe store with indexes, as the informers' cache: objects by `namespace/name` key,
// plus named indexes (an index function maps an object to the values it is filed under). The namespace
// index is always there; the owner (controller uid) and node (spec.nodeName) indexes are offered for the
// loops that need them. Listers read from here and never from the API server.
import type { Selector } from '../api/labels-selector.js';
import { objectKey, type KubeObject } from './kube-object.js';

export type IndexFunc<T> = (obj: T) => readonly string[];

export const NAMESPACE_INDEX = 'namespace';
export const OWNER_INDEX = 'owner';
export const NODE_INDEX = 'nodeName';

export const namespaceIndexFunc: IndexFunc<KubeObject> = (o) => [o.metadata?.namespace ?? ''];
/** Files an object under its controller owner's uid (ReplicaSets under their Deployment, pods under their ReplicaSet). */
export const ownerIndexFunc: IndexFunc<KubeObject> = (o) => (o.metadata?.ownerReferences ?? []).filter((r) => r.controller === true).map((r) => r.uid);
/** Files a pod under spec.nodeName ('' while unbound). */
export const nodeNameIndexFunc: IndexFunc<KubeObject> = (o) => {
  const spec = o.spec as { nodeName?: unknown } | undefined;
  return [typeof spec?.nodeName === 'string' ? spec.nodeName : ''];
};

/** What a loop reads: the informer's cache, never the API server. Objects handed out must not be changed. */
export interface Lister<T extends KubeObject> {
  get(namespace: string, name: string): T | undefined;
  getByKey(key: string): T | undefined;
  /** All objects, or one namespace's ('' for all), optionally filtered by a label selector. */
  list(namespace?: string, selector?: Selector): T[];
  byIndex(index: string, value: string): T[];
  keys(): string[];
}

export class Indexer<T extends KubeObject> implements Lister<T> {
  private readonly items = new Map<string, T>();
  private readonly funcs = new Map<string, IndexFunc<T>>();
  /** index name → value → keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Readonly<Record<string, IndexFunc<T>>> = {}) {
    this.addIndexers({ [NAMESPACE_INDEX]: namespaceIndexFunc as IndexFunc<T>, ...indexers });
  }

  /** Adds indexes (may be called after objects are stored: they are filed at once). */
  addIndexers(indexers: Readonly<Record<string, IndexFunc<T>>>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.funcs.has(name)) continue;
      this.funcs.set(name, fn);
      const idx = new Map<string, Set<string>>();
      this.indices.set(name, idx);
      for (const [key, obj] of this.items) this.file(idx, fn, key, obj);
    }
  }

  size(): number {
    return this.items.size;
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  getByKey(key: string): T | undefined {
    return this.items.get(key);
  }

  get(namespace: string, name: string): T | undefined {
    return this.items.get(namespace ? `${namespace}/${name}` : name);
  }

  list(namespace = '', selector?: Selector): T[] {
    const pool = namespace === '' ? [...this.items.values()] : this.byIndex(NAMESPACE_INDEX, namespace);
    return selector === undefined ? pool : pool.filter((o) => selector.matches(o.metadata?.labels ?? {}));
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.indices.get(index);
    if (idx === undefined) throw new Error(`indexer: no index named ${JSON.stringify(index)}`);
    const out: T[] = [];
    for (const key of idx.get(value) ?? []) {
      const o = this.items.get(key);
      if (o !== undefined) out.push(o);
    }
    return out;
  }

  /** Stores (adds or replaces) an object; returns the one it replaced. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old !== undefined) this.unfileAll(key, old);
    this.items.set(key, obj);
    for (const [name, fn] of this.funcs) this.file(this.indices.get(name)!, fn, key, obj);
    return old;
  }

  removeKey(key: string): T | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.unfileAll(key, old);
    this.items.delete(key);
    return old;
  }

  private file(idx: Map<string, Set<string>>, fn: IndexFunc<T>, key: string, obj: T): void {
    for (const v of fn(obj)) {
      let set = idx.get(v);
      if (set === undefined) idx.set(v, (set = new Set()));
      set.add(key);
    }
  }

  private unfileAll(key: string, obj: T): void {
    for (const [name, fn] of this.funcs) {
      const idx = this.indices.get(name)!;
      for (const v of fn(obj)) {
        const set = idx.get(v);
        if (set === undefined) continue;
        set.delete(key);
        if (set.size === 0) idx.delete(v);
      }
    }
  }
}
