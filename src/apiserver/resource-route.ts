// Which registered resource a resource request is for, and Kubernetes' answer when it is for none: 404
// (`the server could not find the requested resource`) for paths no route serves — an unknown group,
// version, resource or subresource, a named object of a namespaced kind without its namespace, a
// cluster-scoped kind under a namespace — and 405 for a verb the resource does not allow.
import type { RequestInfo } from './request-info.js';
import type { RegisteredResource, ResourceRegistry, SubresourceDescriptor, Verb } from './resource-registry.js';
import { statuses, type Status } from './status.js';

export type ResourceRoute =
  | { readonly kind: 'resource'; readonly registered: RegisteredResource; readonly subresource?: SubresourceDescriptor }
  | { readonly kind: 'error'; readonly status: Status };

/** The verbs that work without a namespace on a namespaced resource: across all namespaces. */
const ALL_NAMESPACE_VERBS = new Set(['list', 'watch']);

export function routeResource(registry: ResourceRegistry, info: RequestInfo): ResourceRoute {
  const notFound: ResourceRoute = { kind: 'error', status: statuses.pathNotFound() };
  const registered = registry.lookup(info.apiGroup, info.apiVersion, info.resource);
  if (!registered) return notFound;
  const d = registered.descriptor;
  // Beyond resource/name/subresource nothing is routed.
  if (info.parts.length > 3) return notFound;
  // RequestInfo reads /api/v1/namespaces/<ns> as the namespace <ns> in itself; any other namespace is a prefix.
  const underNamespace = info.namespace !== '' && !(d.resource === 'namespaces' && info.parts[0] === 'namespaces' && info.name === info.namespace);
  if (!d.namespaced && underNamespace) return notFound;
  let subresource: SubresourceDescriptor | undefined;
  if (info.subresource !== '') {
    subresource = d.subresources.find((s) => s.name === info.subresource);
    if (!subresource) return notFound;
  }
  const verbs: readonly string[] = subresource ? subresource.verbs : d.verbs;
  const action = info.verb === '' ? 'this method' : info.verb;
  if (d.namespaced && !underNamespace) {
    // /api/v1/pods/x names nothing; POST or DELETE on /api/v1/pods is a route without that method.
    if (info.name !== '') return notFound;
    if (!ALL_NAMESPACE_VERBS.has(info.verb)) return { kind: 'error', status: statuses.methodNotSupported({ group: d.group, resource: d.resource }, action) };
  }
  if (!verbs.includes(info.verb as Verb)) {
    const resource = subresource ? `${d.resource}/${subresource.name}` : d.resource;
    return { kind: 'error', status: statuses.methodNotSupported({ group: d.group, resource }, action) };
  }
  return subresource ? { kind: 'resource', registered, subresource } : { kind: 'resource', registered };
}
