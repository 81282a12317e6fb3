// What a node agent may do, in the spirit of Kubernetes' Node authorizer: a user `system:node:<name>` in
// group `system:nodes` may read what its pods need and write only its own things — its Node (and
// nodes/status), its Lease in kube-node-lease, pod status and pod deletion (the agent finishes
// deletions), and events. Anything else is 403 with Kubernetes' Forbidden message. Other users are not
// restricted here (the API server has no general authorization yet). Unlike Kubernetes there is no
// object graph: reads of pods, ConfigMaps and Secrets are not narrowed to the node's own pods. Which pods'
// status a node may write and which it may delete depend on the object: admission/node-restriction.ts.
import type { UserInfo } from '../authn/user-info.js';
import type { RequestInfo } from '../request-info.js';
import { statuses, type Status } from '../status.js';

export const NODES_GROUP = 'system:nodes';
const NODE_USER_PREFIX = 'system:node:';
const READ = new Set(['get', 'list', 'watch']);
const WRITE_OWN = new Set(['get', 'create', 'update', 'patch']);

/** The node a user is, or undefined for users this authorizer does not restrict. */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.groups.includes(NODES_GROUP) || !user.name.startsWith(NODE_USER_PREFIX)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}

function allowed(node: string, i: RequestInfo): boolean | string {
  const key = `${i.apiGroup}/${i.resource}${i.subresource !== '' ? `/${i.subresource}` : ''}`;
  switch (key) {
    case '/nodes':
    case '/nodes/status':
      if (READ.has(i.verb) && i.subresource === '') return true;
      if (!WRITE_OWN.has(i.verb)) return false;
      // A create names the node in its body; the registry's validation keeps the name and path apart.
      return i.verb === 'create' || i.name === node ? true : `node '${node}' cannot modify node '${i.name}'`;
    case 'coordination.k8s.io/leases':
      if (i.namespace !== 'kube-node-lease') return false;
      if (!WRITE_OWN.has(i.verb) && i.verb !== 'delete') return false;
      return i.verb === 'create' || i.name === node ? true : `node '${node}' cannot modify the lease of node '${i.name}'`;
    case '/pods':
      return READ.has(i.verb) || i.verb === 'delete';
    case '/pods/status':
      return i.verb === 'get' || i.verb === 'update' || i.verb === 'patch';
    case '/events':
    case 'events.k8s.io/events':
      return i.verb === 'create' || i.verb === 'update' || i.verb === 'patch';
    case '/configmaps':
    case '/secrets':
    case '/services':
    case '/namespaces':
      return i.verb === 'get' || (key !== '/secrets' && READ.has(i.verb));
    default:
      return false;
  }
}

/** A Forbidden Status when a node may not make this request; undefined when it may (or is no node). */
export function authorizeNode(user: UserInfo, info: RequestInfo): Status | undefined {
  const node = nodeIdentity(user);
  if (node === undefined || !info.isResourceRequest) return undefined;
  const ok = allowed(node, info);
  if (ok === true) return undefined;
  const resource = info.subresource !== '' ? `${info.resource}/${info.subresource}` : info.resource;
  const where = info.namespace !== '' ? ` in the namespace "${info.namespace}"` : info.name === '' || info.resource === 'nodes' ? ' at the cluster scope' : '';
  const why = `User "${user.name}" cannot ${info.verb} resource "${resource}" in API group "${info.apiGroup}"${where}${typeof ok === 'string' ? `: ${ok}` : ''}`;
  return statuses.forbidden({ group: info.apiGroup, resource: info.resource }, info.name, why);
}
