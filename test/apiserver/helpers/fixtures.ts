// What the API server tests share: a few descriptors shaped like the real kinds (namespaced and
// cluster-scoped, core and grouped, with subresources), certificates made with the server's own PKI,
// and a handler that answers with what the shell handed it, so a test sees exactly what a registry would.
import type { ApiRequest, ApiResponse, ResourceHandler } from '../../../src/apiserver/handler.js';
import type { ResourceDescriptor } from '../../../src/apiserver/resource-registry.js';

export const PODS: ResourceDescriptor = {
  group: '',
  version: 'v1',
  resource: 'pods',
  kind: 'Pod',
  singular: 'pod',
  shortNames: ['po'],
  categories: ['all'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    { name: 'status', kind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get', 'patch', 'update'] },
    { name: 'log', kind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get'] },
    { name: 'binding', kind: { group: '', version: 'v1', kind: 'Binding' }, verbs: ['create'] },
  ],
};

export const NAMESPACES: ResourceDescriptor = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  kind: 'Namespace',
  singular: 'namespace',
  shortNames: ['ns'],
  categories: [],
  namespaced: false,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    { name: 'status', kind: { group: '', version: 'v1', kind: 'Namespace' }, verbs: ['get', 'patch', 'update'] },
    { name: 'finalize', kind: { group: '', version: 'v1', kind: 'Namespace' }, verbs: ['update'] },
  ],
};

export const COMPONENT_STATUSES: ResourceDescriptor = {
  group: '',
  version: 'v1',
  resource: 'componentstatuses',
  kind: 'ComponentStatus',
  singular: 'componentstatus',
  shortNames: ['cs'],
  categories: [],
  namespaced: false,
  verbs: ['get', 'list'],
  subresources: [],
};

export const DEPLOYMENTS: ResourceDescriptor = {
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  kind: 'Deployment',
  singular: 'deployment',
  shortNames: ['deploy'],
  categories: ['all'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    { name: 'status', kind: { group: 'apps', version: 'v1', kind: 'Deployment' }, verbs: ['get', 'patch', 'update'] },
    { name: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
  ],
};

export const LEASES: ResourceDescriptor = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  kind: 'Lease',
  singular: 'lease',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [],
};

export const ALL_DESCRIPTORS = [NAMESPACES, PODS, COMPONENT_STATUSES, DEPLOYMENTS, LEASES];

/** A handler from a function, for tests that need one behaviour. */
export function handlerOf(fn: (req: ApiRequest, res: ApiResponse) => Promise<void>): ResourceHandler {
  return { serve: fn };
}

/**
 * The default test handler: GET/list answer what the shell parsed (request info, user, query), writes
 * echo their body, watches send one ADDED per `?events=N` then wait for the watch to end.
 */
export const echoHandler: ResourceHandler = {
  async serve(req, res) {
    const info = { ...req.info, parts: [...req.info.parts] };
    if (req.info.verb === 'watch') {
      const w = res.watch();
      const n = Number(req.query.get('events') ?? '0');
      for (let i = 0; i < n; i++) await w.send({ type: 'ADDED', object: { kind: req.resource.kind, apiVersion: 'v1', metadata: { name: `o${i}`, resourceVersion: String(i + 1) } } });
      await new Promise<void>((resolve) => {
        if (req.signal.aborted) resolve();
        else req.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      w.end();
      return;
    }
    const body = ['create', 'update', 'patch'].includes(req.info.verb) ? (await req.body()).toString('utf8') : undefined;
    res.object(req.info.verb === 'create' ? 201 : 200, {
      kind: 'Echo',
      info,
      user: req.user,
      query: Object.fromEntries(req.query),
      watchTimeoutMs: req.watchTimeoutMs ?? null,
      hasDeadline: req.deadline !== undefined,
      headerNames: Object.keys(req.headers).sort(),
      ...(body !== undefined ? { body } : {}),
    });
  },
};
