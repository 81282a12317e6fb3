// Every request parsed into Kubernetes' RequestInfo before anything else looks at it (as its
// WithRequestInfo filter does): the verb (get/list/watch/create/update/patch/delete/deletecollection
// from the method, the path and watch=true), the group, version, namespace, resource, name and
// subresource. Authentication, the in-flight limits, timeouts, metrics and routing all read it.

export type ResourceVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'proxy';

export interface RequestInfo {
  /** True for /api/<v>/… and /apis/<g>/<v>/… paths that name a resource (not discovery). */
  readonly isResourceRequest: boolean;
  /** The URL path, decoded. */
  readonly path: string;
  /** For resource requests a ResourceVerb; otherwise the lower-case HTTP method ('' for a method no verb maps to). */
  readonly verb: string;
  /** 'api' or 'apis' for resource requests, '' otherwise. */
  readonly apiPrefix: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  /** The path parts from the resource on: [resource, name, subresource, …]. */
  readonly parts: readonly string[];
}

/** Verbs in the path itself (/api/v1/watch/pods, the legacy form), and which of them take no subresource. */
const SPECIAL_VERBS = new Set(['proxy', 'watch']);
const SPECIAL_VERBS_NO_SUBRESOURCES = new Set(['proxy']);

/**
 * Subresources of a namespace, so /namespaces/x/status is not read as a resource called "status" in x.
 * Kubernetes' two, and Setpoint's own `history` and `reconcile` (registry/history-subresource.ts,
 * reconcile-subresource.ts), which every kind has.
 */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize', 'history', 'reconcile']);

/** The query's `watch` as Kubernetes reads a bool parameter: anything but false or 0 is true. */
function watchRequested(query: URLSearchParams): boolean | undefined {
  const v = query.get('watch');
  if (v === null) return undefined;
  const l = v.toLowerCase();
  return !(l === 'false' || l === '0');
}

function methodVerb(method: string): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'GET':
    case 'HEAD':
      return 'get';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return '';
  }
}

export class RequestInfoError extends Error {
  readonly code = 'REQUEST_INFO_INVALID';

  constructor(
    message: string,
    /** What was parsed before the failure, as Kubernetes keeps it. */
    readonly partial: RequestInfo,
  ) {
    super(message);
    this.name = 'RequestInfoError';
  }
}

/** Parses a request as RequestInfoFactory.NewRequestInfo does. `path` is decoded; throws RequestInfoError. */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const base = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [] as string[],
  };
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  let parts = trimmed === '' ? [] : trimmed.split('/');
  if (parts.length < 3) return base;
  const prefix = parts[0] ?? '';
  if (prefix !== 'api' && prefix !== 'apis') return base;
  parts = parts.slice(1);
  let group = '';
  if (prefix === 'apis') {
    // /apis/<group>/<version> is discovery: a resource needs at least one part after the version.
    if (parts.length < 3) return base;
    group = parts[0] ?? '';
    parts = parts.slice(1);
  }
  const version = parts[0] ?? '';
  parts = parts.slice(1);
  let verb: string;
  const head = parts[0] ?? '';
  const info = { ...base, isResourceRequest: true, apiPrefix: prefix, apiGroup: group, apiVersion: version };
  if (SPECIAL_VERBS.has(head)) {
    if (parts.length < 2) throw new RequestInfoError(`unable to determine kind and namespace from url, ${path}`, info);
    verb = head;
    parts = parts.slice(1);
  } else {
    verb = methodVerb(method);
  }
  let namespace = '';
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      namespace = parts[1] ?? '';
      // /namespaces/<ns>/<resource>/…: the resource is what follows; /namespaces/<ns>/status stays the namespace's.
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] ?? '')) parts = parts.slice(2);
    }
  }
  let resource = '';
  let name = '';
  let subresource = '';
  if (parts.length >= 3 && !SPECIAL_VERBS_NO_SUBRESOURCES.has(verb)) subresource = parts[2] ?? '';
  if (parts.length >= 2) name = parts[1] ?? '';
  if (parts.length >= 1) resource = parts[0] ?? '';
  if (name === '' && verb === 'get') verb = watchRequested(query) === true ? 'watch' : 'list';
  if (name === '' && verb === 'delete') verb = 'deletecollection';
  return { ...info, verb, namespace, resource, name, subresource, parts };
}

/** Kubernetes' BasicLongRunningRequestCheck: watches, proxies and streaming subresources run unbounded. */
const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

export function isLongRunning(info: RequestInfo): boolean {
  if (LONG_RUNNING_VERBS.has(info.verb)) return true;
  return info.isResourceRequest && LONG_RUNNING_SUBRESOURCES.has(info.subresource);
}

/** The max-in-flight filter's split: get, list and watch are read-only, everything else mutates. */
export function isMutating(info: RequestInfo): boolean {
  return !(info.verb === 'get' || info.verb === 'list' || info.verb === 'watch');
}
