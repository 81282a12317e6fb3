// Registers the Node (create; on AlreadyExists, make sure our labels are on it, as kubelet reconciles
// them) and posts its status through nodes/status: at once, whenever the facts change, and at the latest
// every --node-status-update-frequency. A failed post is logged and tried at the next tick.
import type { Logger } from 'pino';
import { isAlreadyExists } from '../client/api-status-error.js';
import type { KubeObject } from '../client/kube-object.js';
import { ResourceClient } from '../client/resource-client.js';
import { NODES } from '../client/resource-types.js';
import type { RestClient } from '../client/rest-client.js';
import type { HostFacts } from './host-facts.js';
import { nodeForRegistration, nodeStatus, postedConditions, type NodeShape, type PostedCondition } from './node-object.js';

export class NodeReporter {
  private readonly nodes: ResourceClient;
  private conditions: PostedCondition[] = [];
  private lastFacts = '';
  private lastPost = 0;
  /** The Node's uid once registered (the Lease's owner). */
  uid: string | undefined;

  constructor(
    rest: RestClient,
    private readonly shape: NodeShape,
    private readonly facts: () => HostFacts,
    private readonly log: Logger,
  ) {
    this.nodes = new ResourceClient(rest, NODES);
  }

  get registered(): boolean {
    return this.uid !== undefined;
  }

  /** Creates the Node, or adopts the existing one. */
  async register(): Promise<void> {
    const want = nodeForRegistration(this.shape, this.facts()) as KubeObject;
    let node: KubeObject;
    try {
      node = await this.nodes.create(want);
      this.log.info({ node: this.shape.name }, 'registered the node');
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      node = await this.nodes.patch('', this.shape.name, 'merge', { metadata: { labels: want.metadata?.labels } });
      const prev = (node['status'] as { conditions?: PostedCondition[] } | undefined)?.conditions;
      if (Array.isArray(prev)) this.conditions = prev;
      this.log.info({ node: this.shape.name }, 'the node was registered before: adopted it');
    }
    this.uid = node.metadata?.uid;
  }

  /**
   * Posts the status if the facts changed or `everyMs` passed since the last post; registers first if
   * needed. Returns whether it wrote.
   */
  async maybePost(everyMs: number, now = Date.now()): Promise<boolean> {
    try {
      if (!this.registered) await this.register();
      const facts = this.facts();
      const key = JSON.stringify([facts.conditions.map((c) => c.status), facts.capacity, facts.allocatable, facts.addresses]);
      if (key === this.lastFacts && now - this.lastPost < everyMs) return false;
      const conditions = postedConditions(new Date(now), facts.conditions, this.conditions);
      await this.nodes.patchStatus('', this.shape.name, 'merge', { status: nodeStatus(this.shape, facts, conditions) });
      this.conditions = conditions;
      this.lastFacts = key;
      this.lastPost = now;
      return true;
    } catch (e) {
      this.log.warn({ err: (e as Error).message, node: this.shape.name }, 'error updating the node status, will retry');
      return false;
    }
  }
}
