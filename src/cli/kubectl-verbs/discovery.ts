// What the server serves, found as kubectl finds it (/api, /apis and each group's preferred version), so any
// kind the server serves works in every verb: a manifest's apiVersion+kind, or a typed argument (`pods`,
// `pod`, `po`, `Pod`, `deployments.apps`, `deploy.v1.apps`) become a ResourceType.
import type { ResourceType } from '../../client/resource-client.js';
import type { RestClient } from '../../client/rest-client.js';
import { CliError } from './cli-error.js';

export interface ApiResource extends ResourceType {
  readonly singularName: string;
  readonly shortNames: readonly string[];
  readonly verbs: readonly string[];
  /** The group's preferred version (a typed argument resolves to it). */
  readonly preferred: boolean;
}

interface ResourceListDoc {
  resources?: { name?: string; singularName?: string; namespaced?: boolean; kind?: string; shortNames?: string[]; verbs?: string[] }[];
}

interface GroupListDoc {
  groups?: { name?: string; versions?: { groupVersion?: string; version?: string }[]; preferredVersion?: { version?: string } }[];
}

export class Discovery {
  private constructor(readonly resources: readonly ApiResource[]) {}

  static async load(rest: RestClient): Promise<Discovery> {
    // Both at once, and both awaited together: a failure of either is one error, never an unhandled one.
    const [core, groups] = await Promise.all([rest.request<ResourceListDoc>({ path: '/api/v1' }), rest.request<GroupListDoc>({ path: '/apis' })]);
    const lists: Promise<ApiResource[]>[] = [Promise.resolve(toResources(core, '', 'v1', true))];
    for (const g of groups.groups ?? []) {
      const name = g.name ?? '';
      const preferred = g.preferredVersion?.version;
      for (const v of g.versions ?? []) {
        const version = v.version ?? '';
        if (name === '' || version === '') continue;
        lists.push(rest.request<ResourceListDoc>({ path: `/apis/${name}/${version}` }).then((d) => toResources(d, name, version, version === (preferred ?? version))));
      }
    }
    return new Discovery((await Promise.all(lists)).flat());
  }

  /** For a manifest: `apps/v1` + `Deployment`. */
  forKind(apiVersion: string, kind: string, where: { name?: string; namespace?: string; source?: string } = {}): ApiResource {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const r = this.resources.find((x) => x.group === group && x.version === version && x.kind === kind);
    if (!r) throw new CliError('CLI_UNKNOWN_RESOURCE', `resource mapping not found for name: "${where.name ?? ''}" namespace: "${where.namespace ?? ''}" from "${where.source ?? ''}": no matches for kind "${kind}" in version "${apiVersion}"\nensure CRDs are installed first`);
    return r;
  }

  /** For an argument: `pods`, `po`, `pod`, `Pod`, `deployments.apps`, `deployments.v1.apps`. */
  forArg(arg: string): ApiResource {
    const lower = arg.toLowerCase();
    const dot = lower.indexOf('.');
    const word = dot < 0 ? lower : lower.slice(0, dot);
    const rest = dot < 0 ? undefined : lower.slice(dot + 1);
    const matches = (r: ApiResource): boolean => r.resource === word || r.singularName === word || r.kind.toLowerCase() === word || r.shortNames.includes(word);
    const inGroup = (r: ApiResource): boolean => {
      if (rest === undefined) return true;
      if (r.group === rest) return r.preferred;
      return `${r.version}.${r.group}` === rest;
    };
    const found = this.resources.filter((r) => matches(r) && inGroup(r));
    // The core group wins a tie, then the preferred version, as kubectl's priority RESTMapper does for our kinds.
    const best = found.find((r) => r.group === '' && r.preferred) ?? found.find((r) => r.preferred) ?? found[0];
    if (!best) throw new CliError('CLI_UNKNOWN_RESOURCE', `the server doesn't have a resource type "${arg}"`);
    return best;
  }
}

function toResources(d: ResourceListDoc, group: string, version: string, preferred: boolean): ApiResource[] {
  const out: ApiResource[] = [];
  for (const r of d.resources ?? []) {
    const name = r.name ?? '';
    if (name === '' || name.includes('/')) continue;
    out.push({
      group,
      version,
      resource: name,
      kind: r.kind ?? '',
      namespaced: r.namespaced === true,
      singularName: r.singularName !== undefined && r.singularName !== '' ? r.singularName : (r.kind ?? '').toLowerCase(),
      shortNames: r.shortNames ?? [],
      verbs: r.verbs ?? [],
      preferred,
    });
  }
  return out;
}

/** kubectl's name for a resource in messages: `deployment.apps/web`, `pod/x`. */
export function qualifiedName(r: Pick<ApiResource, 'kind' | 'group'>, name: string): string {
  const k = r.kind.toLowerCase();
  return `${r.group === '' ? k : `${k}.${r.group}`}/${name}`;
}

/** kubectl's `deployments.apps` form in error messages. */
export function groupResource(r: Pick<ApiResource, 'resource' | 'group'>): string {
  return r.group === '' ? r.resource : `${r.resource}.${r.group}`;
}
