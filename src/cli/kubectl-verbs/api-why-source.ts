// `why`'s view of the cluster, all of it through the API server with the kubeconfig's credentials: objects,
// owned objects, events, each object's admission history from its `history` subresource and its loops'
// records from its `reconcile` subresource.
import { isApiStatusError, isNotFound } from '../../client/api-status-error.js';
import type { KubeObject } from '../../client/kube-object.js';
import type { ResourceType } from '../../client/resource-client.js';
import { DEPLOYMENTS, LEASES, NODES, PODS, REPLICASETS } from '../../client/resource-types.js';
import { HISTORY_SUBRESOURCE, historyEntriesOf } from '../../why/history-list.js';
import { RECONCILE_SUBRESOURCE, loopRecordsOf } from '../../why/reconcile-list.js';
import type { HistoryEntry, LoopRecord, WhySource } from '../../why/why-source.js';
import type { CliContext } from './cli-context.js';
import { eventsFor } from './describe-verb.js';

const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** Objects listed per owned() call: bounds one `why` on a huge namespace. */
const LIST_LIMIT = 500;

export class ApiWhySource implements WhySource {
  private readonly types = new Map<string, ResourceType>([
    ['Deployment', DEPLOYMENTS],
    ['ReplicaSet', REPLICASETS],
    ['Pod', PODS],
    ['Node', NODES],
  ]);

  /** False once the server showed it does not serve history to us (an older server, or Forbidden). */
  private historyServed = true;
  /** The same for the loops' records. */
  private recordsServed = true;

  constructor(
    private readonly ctx: CliContext,
    target: ResourceType,
  ) {
    this.types.set(target.kind, target);
  }

  get historyAvailable(): boolean {
    return this.historyServed;
  }

  now(): number {
    return Date.now();
  }

  private type(kind: string): ResourceType {
    const t = this.types.get(kind);
    if (!t) throw new Error(`why: no resource known for kind ${kind}`);
    return t;
  }

  async get(kind: string, namespace: string, name: string): Promise<KubeObject | undefined> {
    const t = this.type(kind);
    try {
      return await this.ctx.client(t).get(t.namespaced ? namespace : '', name);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  async owned(kind: string, namespace: string, uid: string): Promise<KubeObject[]> {
    const list = await this.ctx.client(this.type(kind)).list(namespace, { limit: LIST_LIMIT });
    return list.items.filter((o) => (o.metadata?.ownerReferences ?? []).some((r) => r.uid === uid));
  }

  events(kind: string, o: KubeObject): Promise<KubeObject[]> {
    return eventsFor(this.ctx, kind, o);
  }

  async nodeLeaseRenewTime(node: string): Promise<string | undefined> {
    try {
      const lease = await this.ctx.client(LEASES).get(NODE_LEASE_NAMESPACE, node);
      const t = (lease.spec as { renewTime?: unknown } | undefined)?.renewTime;
      return typeof t === 'string' ? t : undefined;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  async history(kind: string, namespace: string, name: string): Promise<HistoryEntry[] | undefined> {
    if (!this.historyServed) return undefined;
    const got = await this.companion(kind, namespace, name, HISTORY_SUBRESOURCE, historyEntriesOf);
    if (got === undefined) this.historyServed = false;
    return got;
  }

  async loopRecords(kind: string, namespace: string, name: string): Promise<LoopRecord[] | undefined> {
    if (!this.recordsServed) return undefined;
    const got = await this.companion(kind, namespace, name, RECONCILE_SUBRESOURCE, loopRecordsOf);
    if (got === undefined) this.recordsServed = false;
    return got;
  }

  /** A Setpoint subresource beside the object: [] when none is recorded, undefined when the server does not serve it to us. */
  private async companion<T>(kind: string, namespace: string, name: string, sub: string, parse: (list: unknown) => T[]): Promise<T[] | undefined> {
    const t = this.type(kind);
    const client = this.ctx.client(t);
    try {
      return parse(await client.rest.request<unknown>({ path: client.path(t.namespaced ? namespace : '', name, sub) }));
    } catch (e) {
      // The object's own 404 names it (none recorded); a bare 404 is a server without the subresource.
      if (isNotFound(e) && isApiStatusError(e) && (e.details?.name ?? '') !== '') return [];
      if (isNotFound(e) || isApiStatusError(e, 'Forbidden') || isApiStatusError(e, 'MethodNotAllowed')) return undefined;
      throw e;
    }
  }
}
