// The garbage collector's writes to an object it does not own: each reads the object first, checks it is
// still the same one (its uid), and writes with that resourceVersion, so a change made meanwhile is a
// conflict to retry and never overwritten.
import { isNotFound } from '../../client/api-status-error.js';
import type { KubeObject, OwnerReference } from '../../client/kube-object.js';
import type { ResourceClient } from '../../client/resource-client.js';

/** The live object if it is still the one with this uid. */
export async function getSame(client: ResourceClient, namespace: string, name: string, uid: string): Promise<KubeObject | undefined> {
  try {
    const o = await client.get(namespace, name);
    return o.metadata?.uid === uid ? o : undefined;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

async function patchMeta(client: ResourceClient, o: KubeObject, meta: Record<string, unknown>): Promise<void> {
  const m = o.metadata ?? {};
  try {
    await client.patch(m.namespace ?? '', m.name ?? '', 'merge', { metadata: { ...meta, resourceVersion: m.resourceVersion } });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/** Removes one finalizer (Kubernetes' finalizer names are unique in the list). */
export async function removeFinalizer(client: ResourceClient, namespace: string, name: string, uid: string, finalizer: string): Promise<void> {
  const o = await getSame(client, namespace, name, uid);
  const fin = o?.metadata?.finalizers ?? [];
  if (o === undefined || !fin.includes(finalizer)) return;
  await patchMeta(client, o, { finalizers: fin.filter((f) => f !== finalizer) });
}

/** Rewrites the object's ownerReferences through `edit` (no write when nothing changes). */
export async function editOwnerReferences(
  client: ResourceClient,
  namespace: string,
  name: string,
  uid: string,
  edit: (refs: readonly OwnerReference[]) => OwnerReference[],
): Promise<void> {
  const o = await getSame(client, namespace, name, uid);
  if (o === undefined) return;
  const refs = o.metadata?.ownerReferences ?? [];
  const next = edit(refs);
  if (JSON.stringify(next) === JSON.stringify(refs)) return;
  await patchMeta(client, o, { ownerReferences: next });
}
