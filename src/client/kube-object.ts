// The object shapes the client reads without knowing a kind: metadata and lists, as the API serves them.

export type { ObjectMeta, OwnerReference } from '../api/object-meta.js';
import type { ObjectMeta } from '../api/object-meta.js';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** `namespace/name`, or `name` for cluster-scoped objects: client-go's MetaNamespaceKeyFunc. */
export function objectKey(o: KubeObject): string {
  const ns = o.metadata?.namespace;
  const name = o.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}

export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}
