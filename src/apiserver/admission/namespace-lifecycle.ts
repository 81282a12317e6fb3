// NamespaceLifecycle: no new content in a missing or Terminating namespace, and the namespaces the system
// depends on cannot be deleted (Kubernetes' plugin of the same name, first in the chain).
import { StatusError, statuses, type Status } from '../status.js';
import type { StoredObject } from '../storage/interface.js';
import type { AdmissionPlugin } from './admission-chain.js';
import type { AdmissionAttributes } from './interface.js';

/** What the plugin needs from the registry; the registry wires it to its namespace store. */
export interface NamespaceLookup {
  getNamespace(name: string): Promise<StoredObject | undefined>;
}

/** Namespaces Kubernetes refuses to delete. */
export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

export const NAMESPACE_LIFECYCLE = 'NamespaceLifecycle';

/** Kubernetes' StatusCause type on a create refused because its namespace is terminating. */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

function terminating(attrs: AdmissionAttributes): Status {
  const gr = { group: attrs.resource.group, resource: attrs.resource.resource };
  const s = statuses.forbidden(gr, attrs.name, `unable to create new content in namespace ${attrs.namespace} because it is being terminated`);
  const cause = { reason: NAMESPACE_TERMINATING_CAUSE, message: `namespace ${attrs.namespace} is being terminated`, field: 'metadata.namespace' };
  return { ...s, details: { ...s.details, causes: [cause] } };
}

export async function namespaceLifecycle(attrs: AdmissionAttributes, lookup: NamespaceLookup): Promise<void> {
  const gr = { group: attrs.resource.group, resource: attrs.resource.resource };
  const isNamespace = attrs.resource.group === '' && attrs.resource.resource === 'namespaces' && attrs.subresource === '';
  if (isNamespace) {
    if (attrs.operation === 'DELETE' && IMMORTAL_NAMESPACES.has(attrs.name)) {
      throw new StatusError(statuses.forbidden(gr, attrs.name, 'this namespace may not be deleted'));
    }
    return;
  }
  // Cluster-scoped objects and anything but creates are not this plugin's business.
  if (attrs.namespace === '' || attrs.operation !== 'CREATE') return;
  const ns = await lookup.getNamespace(attrs.namespace);
  if (ns === undefined) {
    throw new StatusError(statuses.notFound({ group: '', resource: 'namespaces' }, attrs.namespace));
  }
  const phase = (ns['status'] as { phase?: unknown } | undefined)?.phase;
  if (phase === 'Terminating' || ns.metadata['deletionTimestamp'] !== undefined) throw new StatusError(terminating(attrs));
}

export function namespaceLifecyclePlugin(lookup: NamespaceLookup): AdmissionPlugin {
  return { name: NAMESPACE_LIFECYCLE, handles: () => true, admit: (attrs) => namespaceLifecycle(attrs, lookup) };
}
