// The node authorizer: a node's own writes pass, another node's and unrelated resources are Forbidden in
// Kubernetes' words; users outside system:nodes are not its business.
import { describe, expect, it } from 'vitest';
import { authorizeNode } from '../../src/apiserver/authz/node-authorizer.js';
import { authenticatedUser } from '../../src/apiserver/authn/user-info.js';
import type { RequestInfo } from '../../src/apiserver/request-info.js';

const node = authenticatedUser('system:node:n1', '', ['system:nodes']);
const info = (o: Partial<RequestInfo>): RequestInfo => ({ isResourceRequest: true, path: '', verb: 'get', apiPrefix: 'api', apiGroup: '', apiVersion: 'v1', namespace: '', resource: '', subresource: '', name: '', parts: [], ...o });

describe('node authorizer', () => {
  it.each([
    ['create node', { verb: 'create', resource: 'nodes' }],
    ['patch own node status', { verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n1' }],
    ['list nodes', { verb: 'list', resource: 'nodes' }],
    ['update own lease', { verb: 'update', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease', name: 'n1' }],
    ['watch pods', { verb: 'watch', resource: 'pods' }],
    ['patch pod status', { verb: 'patch', resource: 'pods', subresource: 'status', namespace: 'default', name: 'p' }],
    ['delete a pod', { verb: 'delete', resource: 'pods', namespace: 'default', name: 'p' }],
    ['create an event', { verb: 'create', resource: 'events', namespace: 'default' }],
    ['get a secret', { verb: 'get', resource: 'secrets', namespace: 'default', name: 's' }],
  ])('allows: %s', (_, o) => {
    expect(authorizeNode(node, info(o))).toBeUndefined();
  });

  it('forbids another node, another lease, pods writes, secret lists and other kinds', () => {
    expect(authorizeNode(node, info({ verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n2' }))?.message).toBe(
      `nodes "n2" is forbidden: User "system:node:n1" cannot patch resource "nodes/status" in API group "" at the cluster scope: node 'n1' cannot modify node 'n2'`,
    );
    expect(authorizeNode(node, info({ verb: 'update', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease', name: 'n2' }))?.code).toBe(403);
    expect(authorizeNode(node, info({ verb: 'create', resource: 'pods', namespace: 'default' }))?.message).toBe(
      'pods is forbidden: User "system:node:n1" cannot create resource "pods" in API group "" in the namespace "default"',
    );
    expect(authorizeNode(node, info({ verb: 'list', resource: 'secrets', namespace: 'default' }))?.reason).toBe('Forbidden');
    expect(authorizeNode(node, info({ verb: 'create', apiGroup: 'apps', resource: 'deployments', namespace: 'default' }))?.code).toBe(403);
  });

  it('leaves other users alone', () => {
    const admin = authenticatedUser('admin', '', ['system:masters']);
    expect(authorizeNode(admin, info({ verb: 'delete', resource: 'nodes', name: 'n2' }))).toBeUndefined();
    // The name alone is not a node identity: the group must say so too.
    expect(authorizeNode(authenticatedUser('system:node:n1', '', []), info({ verb: 'delete', resource: 'nodes', name: 'n2' }))).toBeUndefined();
  });
});
