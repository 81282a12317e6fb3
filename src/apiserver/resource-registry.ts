// What the API server serves: one descriptor per resource (its group, version, kind, names, scope, verbs
// and subresources), each with the handler that serves it. Kinds register here; discovery, routing and
// metrics read only this, so adding a kind touches no generic code.
import type { ResourceHandler } from './handler.js';

/** The verbs a resource can allow, as discovery lists them. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface SubresourceDescriptor {
  /** `status`, `scale`, `binding`, `log`, `eviction`, `finalize`. */
  readonly name: string;
  /** What it answers with: the parent's kind for status, autoscaling/v1 Scale for scale. */
  readonly kind: GroupVersionKind;
  readonly verbs: readonly Verb[];
  /** Kinds it accepts when they differ from `kind` (pods/binding accepts a Binding, eviction an Eviction). */
  readonly acceptedTypes?: readonly GroupVersionKind[];
}

export interface ResourceDescriptor {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** The plural, lower-case resource name in URLs: `pods`. */
  readonly resource: string;
  readonly kind: string;
  /** `pod`. */
  readonly singular: string;
  readonly shortNames: readonly string[];
  /** `all` puts it in `kubectl get all`. */
  readonly categories: readonly string[];
  readonly namespaced: boolean;
  readonly verbs: readonly Verb[];
  readonly subresources: readonly SubresourceDescriptor[];
}

export interface RegisteredResource {
  readonly descriptor: ResourceDescriptor;
  readonly handler: ResourceHandler;
}

export class RegistryError extends Error {
  readonly code = 'RESOURCE_REGISTRY';

  constructor(message: string) {
    super(message);
    this.name = 'RegistryError';
  }
}

function gvKey(group: string, version: string): string {
  return `${group}/${version}`;
}

/**
 * The served resources, by group and version in registration order (discovery lists groups in the order
 * they were first registered, core first when it is). `generation` goes up on every change, so discovery
 * can cache what it renders.
 */
export class ResourceRegistry {
  private readonly byGv = new Map<string, Map<string, RegisteredResource>>();
  private readonly groupOrder: string[] = [];
  private readonly versionsOf = new Map<string, string[]>();
  private gen = 0;

  get generation(): number {
    return this.gen;
  }

  register(descriptor: ResourceDescriptor, handler: ResourceHandler): void {
    const { group, version, resource } = descriptor;
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(resource)) throw new RegistryError(`resource name ${JSON.stringify(resource)} is not a lower-case DNS label`);
    if (descriptor.subresources.some((s) => s.name === '' || s.name.includes('/'))) throw new RegistryError(`${resource}: a subresource name is empty or has a '/'`);
    const key = gvKey(group, version);
    let resources = this.byGv.get(key);
    if (!resources) {
      resources = new Map();
      this.byGv.set(key, resources);
      if (!this.versionsOf.has(group)) {
        this.versionsOf.set(group, []);
        // The core group leads /api; among /apis groups the first registered comes first.
        if (group === '') this.groupOrder.unshift(group);
        else this.groupOrder.push(group);
      }
      this.versionsOf.get(group)?.push(version);
    }
    if (resources.has(resource)) throw new RegistryError(`${resource} in ${key} is registered twice`);
    resources.set(resource, { descriptor, handler });
    this.gen++;
  }

  lookup(group: string, version: string, resource: string): RegisteredResource | undefined {
    return this.byGv.get(gvKey(group, version))?.get(resource);
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.byGv.has(gvKey(group, version));
  }

  /** Groups in discovery order ('' first when present). */
  groups(): readonly string[] {
    return this.groupOrder;
  }

  /** A group's versions, the preferred (first registered) first. */
  versions(group: string): readonly string[] {
    return this.versionsOf.get(group) ?? [];
  }

  resources(group: string, version: string): readonly RegisteredResource[] {
    return [...(this.byGv.get(gvKey(group, version))?.values() ?? [])];
  }

  all(): readonly RegisteredResource[] {
    return [...this.byGv.values()].flatMap((m) => [...m.values()]);
  }
}
