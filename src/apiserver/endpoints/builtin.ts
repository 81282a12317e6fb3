// The paths that are not resources: discovery, health, version, metrics, OpenAPI and the root list of
// paths — each answered as kube-apiserver answers it, anything else 404 with Kubernetes' Status.
import type { MediaRange } from '../media-type.js';
import type { ApiServerMetrics } from '../metrics.js';
import type { ResourceRegistry } from '../resource-registry.js';
import { statuses } from '../status.js';
import type { Discovery } from './discovery.js';
import type { HealthChecks, HealthEndpoint } from './health.js';
import type { OpenApiV3 } from './openapi.js';
import { jsonReply, type Reply } from './reply.js';
import type { VersionInfo } from './version.js';

export interface BuiltinEndpoints {
  readonly registry: ResourceRegistry;
  readonly discovery: Discovery;
  readonly health: HealthChecks;
  readonly healthCheckNames: Readonly<Record<HealthEndpoint, readonly string[]>>;
  readonly openapi: OpenApiV3;
  readonly metrics: ApiServerMetrics;
  readonly version: VersionInfo;
}

export interface BuiltinRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly accept: readonly MediaRange[];
  readonly ifNoneMatch: string | undefined;
}

const HEALTH = new Set<string>(['healthz', 'livez', 'readyz']);

function segments(path: string): string[] {
  const t = path.replace(/^\/+|\/+$/g, '');
  return t === '' ? [] : t.split('/');
}

/** The health endpoint a path is for (`/readyz`, `/readyz/etcd`), if any. */
export function healthEndpointOf(path: string): HealthEndpoint | undefined {
  const s = segments(path);
  return s.length >= 1 && s.length <= 2 && HEALTH.has(s[0] ?? '') ? (s[0] as HealthEndpoint) : undefined;
}

/**
 * What an anonymous client may read, as Kubernetes' system:public-info-viewer role allows (with anonymous
 * access limited to these paths, as 1.32's anonymous-authenticator configuration can): health and version.
 */
export function isPublicPath(path: string): boolean {
  return healthEndpointOf(path) !== undefined || path === '/version' || path === '/version/';
}

const notFound = (): Reply => jsonReply(404, statuses.pathNotFound());

export async function builtinReply(e: BuiltinEndpoints, r: BuiltinRequest): Promise<Reply> {
  const s = segments(r.path);
  if (r.method !== 'GET' && r.method !== 'HEAD') {
    return s.length === 0 || isKnownPrefix(s[0] ?? '') ? jsonReply(405, statuses.methodNotAllowed()) : notFound();
  }
  const [first = '', second, third, ...rest] = s;
  const health = healthEndpointOf(r.path);
  if (health !== undefined) return (await e.health.reply(health, second, r.query)) ?? notFound();
  switch (first) {
    case '':
      return jsonReply(200, { paths: rootPaths(e) });
    case 'version':
      if (s.length !== 1) return notFound();
      // kube-apiserver indents /version.
      return { code: 200, contentType: 'application/json', body: JSON.stringify(e.version, null, 2) + '\n' };
    case 'metrics':
      if (s.length !== 1) return notFound();
      return { code: 200, contentType: e.metrics.registry.contentType, body: await e.metrics.registry.metrics() };
    case 'api':
      if (second === undefined) return e.discovery.root('api', r.accept, r.ifNoneMatch);
      if (third === undefined) return e.discovery.groupVersion('', second) ?? notFound();
      return notFound();
    case 'apis':
      if (second === undefined) return e.discovery.root('apis', r.accept, r.ifNoneMatch);
      if (third === undefined) return e.discovery.group(second) ?? notFound();
      if (rest.length === 0) return e.discovery.groupVersion(second, third) ?? notFound();
      return notFound();
    case 'openapi':
      if (second === 'v3') {
        if (third === undefined) return e.openapi.index();
        return e.openapi.document([third, ...rest].join('/'), r.query.get('hash')) ?? notFound();
      }
      return notFound();
    default:
      return notFound();
  }
}

function isKnownPrefix(first: string): boolean {
  return ['api', 'apis', 'version', 'metrics', 'openapi', ...HEALTH].includes(first);
}

/** GET / lists what is served, sorted, as kube-apiserver's root does. */
function rootPaths(e: BuiltinEndpoints): string[] {
  const paths = new Set<string>(['/api', '/apis', '/metrics', '/openapi/v3', '/version']);
  if (e.registry.versions('').length > 0) for (const v of e.registry.versions('')) paths.add(`/api/${v}`);
  for (const g of e.registry.groups()) {
    if (g === '') continue;
    paths.add(`/apis/${g}`);
    for (const v of e.registry.versions(g)) paths.add(`/apis/${g}/${v}`);
  }
  for (const [endpoint, names] of Object.entries(e.healthCheckNames)) {
    paths.add(`/${endpoint}`);
    for (const n of names) paths.add(`/${endpoint}/${n}`);
  }
  return [...paths].sort();
}
