// Which namespaced kinds a namespace can hold, from the API server's discovery (the preferred version of
// each group, as ServerPreferredNamespacedResources): every resource that can be listed and deleted.
// A group whose discovery fails is reported, not fatal: the rest is still emptied.
import type { ResourceType } from '../../client/resource-client.js';
import type { RestClient } from '../../client/rest-client.js';

export interface DiscoveredResource extends ResourceType {
  readonly verbs: readonly string[];
}

export interface Discovery {
  readonly resources: DiscoveredResource[];
  /** `group/version: error` for each group version that could not be read. */
  readonly failures: string[];
}

interface ApiResource {
  name?: string;
  namespaced?: boolean;
  kind?: string;
  verbs?: string[];
}

interface ApiGroup {
  name?: string;
  versions?: Array<{ groupVersion?: string; version?: string }>;
  preferredVersion?: { groupVersion?: string; version?: string };
}

async function resourcesOf(rest: RestClient, group: string, version: string): Promise<DiscoveredResource[]> {
  const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  const list = await rest.request<{ resources?: ApiResource[] }>({ path });
  const out: DiscoveredResource[] = [];
  for (const r of list.resources ?? []) {
    const verbs = r.verbs ?? [];
    if (!r.name || r.name.includes('/') || r.namespaced !== true || !verbs.includes('list') || !(verbs.includes('delete') || verbs.includes('deletecollection'))) continue;
    out.push({ group, version, resource: r.name, kind: r.kind ?? '', namespaced: true, verbs });
  }
  return out;
}

export async function discoverNamespacedResources(rest: RestClient): Promise<Discovery> {
  const failures: string[] = [];
  const targets: Array<{ group: string; version: string }> = [{ group: '', version: 'v1' }];
  try {
    const groups = await rest.request<{ groups?: ApiGroup[] }>({ path: '/apis' });
    for (const g of groups.groups ?? []) {
      const v = g.preferredVersion?.version ?? g.versions?.[0]?.version;
      if (g.name && v) targets.push({ group: g.name, version: v });
    }
  } catch (e) {
    failures.push(`apis: ${(e as Error).message}`);
  }
  const resources: DiscoveredResource[] = [];
  for (const t of targets) {
    try {
      resources.push(...(await resourcesOf(rest, t.group, t.version)));
    } catch (e) {
      failures.push(`${t.group === '' ? '' : `${t.group}/`}${t.version}: ${(e as Error).message}`);
    }
  }
  return { resources, failures };
}
