// Discovery from the registered descriptors, in both forms kubectl reads: legacy (/api, /apis,
// /apis/<g>, /api/v1, /apis/<g>/<v>) and aggregated (apidiscovery.k8s.io/v2 APIGroupDiscoveryList on
// /api and /apis). Which one a client gets depends on its Accept, and the aggregated form goes out with
// exactly its content type: kubectl parses by the response's Content-Type, and the same body as plain
// application/json silently gives it zero resources (kubectl-wire.md §1).
import { createHash } from 'node:crypto';
import { negotiate, type MediaRange } from '../media-type.js';
import type { GroupVersionKind, ResourceDescriptor, ResourceRegistry } from '../resource-registry.js';
import { statuses } from '../status.js';
import { jsonReply, type Reply } from './reply.js';

export const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
export const AGGREGATED_V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const JSON_TYPE = 'application/json';

export interface DiscoveryOptions {
  /** host:port clients reach this server at (APIVersions.serverAddressByClientCIDRs). */
  readonly serverAddress: string;
}

/** Kubernetes' storageVersionHash: 8 bytes of SHA-256 of group/version/kind, base64. */
function storageVersionHash(d: ResourceDescriptor): string {
  return createHash('sha256').update(`${d.group}/${d.version}/${d.kind}`).digest().subarray(0, 8).toString('base64');
}

function groupVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

function sortedVerbs(verbs: readonly string[]): string[] {
  return [...new Set(verbs)].sort();
}

function gvk(k: GroupVersionKind): { group: string; version: string; kind: string } {
  return { group: k.group, version: k.version, kind: k.kind };
}

/** APIResourceList entries: the resource, then each subresource as `<resource>/<sub>`. */
function apiResources(descriptors: readonly ResourceDescriptor[]): unknown[] {
  const out: unknown[] = [];
  for (const d of descriptors) {
    out.push({
      name: d.resource,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: sortedVerbs(d.verbs),
      ...(d.shortNames.length > 0 ? { shortNames: [...d.shortNames] } : {}),
      ...(d.categories.length > 0 ? { categories: [...d.categories] } : {}),
      storageVersionHash: storageVersionHash(d),
    });
    for (const s of d.subresources) {
      const foreign = s.kind.group !== d.group || s.kind.version !== d.version;
      out.push({
        name: `${d.resource}/${s.name}`,
        singularName: '',
        namespaced: d.namespaced,
        ...(foreign ? { group: s.kind.group, version: s.kind.version } : {}),
        kind: s.kind.kind,
        verbs: sortedVerbs(s.verbs),
      });
    }
  }
  return out;
}

/** An aggregated-discovery APIResourceDiscovery. */
function resourceDiscovery(d: ResourceDescriptor): unknown {
  return {
    resource: d.resource,
    responseKind: { group: d.group, version: d.version, kind: d.kind },
    scope: d.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: d.singular,
    verbs: sortedVerbs(d.verbs),
    ...(d.shortNames.length > 0 ? { shortNames: [...d.shortNames] } : {}),
    ...(d.categories.length > 0 ? { categories: [...d.categories] } : {}),
    ...(d.subresources.length > 0
      ? {
          subresources: d.subresources.map((s) => ({
            subresource: s.name,
            responseKind: gvk(s.kind),
            ...(s.acceptedTypes && s.acceptedTypes.length > 0 ? { acceptedTypes: s.acceptedTypes.map(gvk) } : {}),
            verbs: sortedVerbs(s.verbs),
          })),
        }
      : {}),
  };
}

interface Rendered {
  readonly body: string;
  readonly etag: string;
}

function render(value: unknown): Rendered {
  const body = JSON.stringify(value) + '\n';
  return { body, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"` };
}

export class Discovery {
  private cache: { generation: number; docs: Map<string, Rendered> } | undefined;

  constructor(
    private readonly registry: ResourceRegistry,
    private readonly opts: DiscoveryOptions,
  ) {}

  /** Documents are rendered once per registry generation, not per request. */
  private doc(key: string, build: () => unknown): Rendered {
    if (this.cache?.generation !== this.registry.generation) this.cache = { generation: this.registry.generation, docs: new Map() };
    let r = this.cache.docs.get(key);
    if (!r) {
      r = render(build());
      this.cache.docs.set(key, r);
    }
    return r;
  }

  private groupEntry(group: string): unknown {
    const versions = this.registry.versions(group).map((v) => ({ groupVersion: groupVersion(group, v), version: v }));
    return { name: group, versions, ...(versions[0] ? { preferredVersion: versions[0] } : {}) };
  }

  private aggregated(apiVersion: string, groups: readonly string[]): unknown {
    return {
      kind: 'APIGroupDiscoveryList',
      apiVersion,
      metadata: {},
      items: groups.map((g) => ({
        metadata: { ...(g !== '' ? { name: g } : {}), creationTimestamp: null },
        versions: this.registry.versions(g).map((v) => ({
          version: v,
          resources: this.registry.resources(g, v).map((r) => resourceDiscovery(r.descriptor)),
          freshness: 'Current',
        })),
      })),
    };
  }

  /** /api or /apis, answered in the form the Accept header asks for. */
  root(prefix: 'api' | 'apis', accept: readonly MediaRange[], ifNoneMatch: string | undefined): Reply {
    const chosen = negotiate(accept, [AGGREGATED_V2, AGGREGATED_V2BETA1, JSON_TYPE]);
    if (chosen === undefined) return jsonReply(406, statuses.notAcceptable([JSON_TYPE, AGGREGATED_V2, AGGREGATED_V2BETA1]));
    const groups = this.registry.groups().filter((g) => (prefix === 'api' ? g === '' : g !== ''));
    if (chosen !== JSON_TYPE) {
      const apiVersion = chosen === AGGREGATED_V2 ? 'apidiscovery.k8s.io/v2' : 'apidiscovery.k8s.io/v2beta1';
      const r = this.doc(`agg:${prefix}:${apiVersion}`, () => this.aggregated(apiVersion, groups));
      return conditional(r, chosen, ifNoneMatch);
    }
    if (prefix === 'api') {
      const r = this.doc('api', () => ({
        kind: 'APIVersions',
        versions: this.registry.versions(''),
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: this.opts.serverAddress }],
      }));
      return conditional(r, JSON_TYPE, ifNoneMatch);
    }
    const r = this.doc('apis', () => ({ kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => this.groupEntry(g)) }));
    return conditional(r, JSON_TYPE, ifNoneMatch);
  }

  /** /apis/<group>: an APIGroup, or undefined when the group is not served. */
  group(group: string): Reply | undefined {
    if (this.registry.versions(group).length === 0) return undefined;
    const r = this.doc(`group:${group}`, () => ({ kind: 'APIGroup', apiVersion: 'v1', ...(this.groupEntry(group) as object) }));
    return { code: 200, contentType: JSON_TYPE, body: r.body };
  }

  /** /api/v1 or /apis/<g>/<v>: an APIResourceList, or undefined when the group version is not served. */
  groupVersion(group: string, version: string): Reply | undefined {
    if (!this.registry.hasGroupVersion(group, version)) return undefined;
    const r = this.doc(`gv:${group}/${version}`, () => ({
      kind: 'APIResourceList',
      // The core list has no apiVersion, as kube-apiserver's.
      ...(group !== '' ? { apiVersion: 'v1' } : {}),
      groupVersion: groupVersion(group, version),
      resources: apiResources(this.registry.resources(group, version).map((x) => x.descriptor)),
    }));
    return { code: 200, contentType: JSON_TYPE, body: r.body };
  }
}

/** 304 when the client's copy is current; Vary: Accept either way, since one URL has two forms. */
function conditional(r: Rendered, contentType: string, ifNoneMatch: string | undefined): Reply {
  const headers = { ETag: r.etag, Vary: 'Accept' };
  if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((t) => t.trim() === r.etag)) {
    return { code: 304, contentType, body: '', headers };
  }
  return { code: 200, contentType, body: r.body, headers };
}
