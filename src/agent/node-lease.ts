// The node's heartbeat: a Lease named after the node in kube-node-lease, owned by the Node, renewed every
// quarter of its duration (kubelet: 40 s lease, renewed every 10 s). A conflict or a missing Lease is
// read again and retried at the next tick; a failed renewal never stops the agent.
import type { Logger } from 'pino';
import { isConflict, isNotFound } from '../client/api-status-error.js';
import type { KubeObject } from '../client/kube-object.js';
import { ResourceClient } from '../client/resource-client.js';
import { LEASES } from '../client/resource-types.js';
import type { RestClient } from '../client/rest-client.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class NodeLease {
  private readonly leases: ResourceClient;
  private current: KubeObject | undefined;

  constructor(
    rest: RestClient,
    private readonly nodeName: string,
    private readonly durationSeconds: number,
    private readonly log: Logger,
    private readonly nodeUid: () => string | undefined,
  ) {
    this.leases = new ResourceClient(rest, LEASES);
  }

  /** kubelet renews at a quarter of the duration. */
  get renewIntervalMs(): number {
    return Math.max(1000, (this.durationSeconds * 1000) / 4);
  }

  private desired(base: KubeObject | undefined): KubeObject {
    const uid = this.nodeUid();
    const meta = { ...(base?.metadata ?? {}), name: this.nodeName, namespace: NODE_LEASE_NAMESPACE };
    if (uid !== undefined && (meta.ownerReferences ?? []).length === 0) {
      meta.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: this.nodeName, uid }];
    }
    const spec = { ...((base?.['spec'] as Record<string, unknown> | undefined) ?? {}), holderIdentity: this.nodeName, leaseDurationSeconds: this.durationSeconds, renewTime: microTime(new Date()) };
    return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: meta, spec };
  }

  /** One renewal; true when the Lease was written. */
  async renew(): Promise<boolean> {
    try {
      if (this.current === undefined) {
        try {
          this.current = await this.leases.get(NODE_LEASE_NAMESPACE, this.nodeName);
        } catch (e) {
          if (!isNotFound(e)) throw e;
          this.current = await this.leases.create(this.desired(undefined), { namespace: NODE_LEASE_NAMESPACE });
          return true;
        }
      }
      this.current = await this.leases.update(this.desired(this.current));
      return true;
    } catch (e) {
      // Read it again next time: someone else wrote it, or it was deleted.
      if (isConflict(e) || isNotFound(e)) this.current = undefined;
      this.log.warn({ err: (e as Error).message, node: this.nodeName }, 'failed to update the node lease');
      return false;
    }
  }
}
