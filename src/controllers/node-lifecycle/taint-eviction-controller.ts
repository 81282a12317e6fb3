// The taint eviction controller (Kubernetes' NoExecuteTaintManager, `taint-eviction-controller`): a pod on
// a node with NoExecute taints it does not tolerate is deleted at once; one that tolerates them with
// tolerationSeconds is deleted when that time has passed since the controller saw it under the taints;
// each deletion is announced with a TaintManagerEviction event, and a countdown the taints' removal
// stops is announced as cancelled.
import { isNotFound } from '../../client/api-status-error.js';
import type { EventRecorder } from '../../client/event-recorder.js';
import { NODE_INDEX } from '../../client/indexer.js';
import { deletedObject } from '../../client/informer.js';
import { objectKey } from '../../client/kube-object.js';
import { ResourceClient } from '../../client/resource-client.js';
import { PODS } from '../../client/resource-types.js';
import type { ControllerContext, ControllerFactory } from '../controller.js';
import { LoopController, type ReconcileResult } from '../keyed-loop.js';
import { noExecuteTaints } from './node-taints.js';
import { nodeAndPodInformers, type NodeObject, type PodObject } from './node-types.js';
import { EvictionTimer, evictionDelay } from './taint-eviction.js';

export class TaintEvictionController extends LoopController {
  private readonly timer: EvictionTimer;
  /** Nodes (for their NoExecute taints) and pods by node. */
  private readonly cache: ReturnType<typeof nodeAndPodInformers>;
  private readonly pods: ResourceClient<PodObject>;
  private readonly recorder: EventRecorder;

  constructor(ctx: ControllerContext) {
    super(ctx, 'taint-eviction-controller');
    this.timer = new EvictionTimer(ctx.clock);
    this.recorder = ctx.recorderFor('taint-eviction-controller');
    this.pods = new ResourceClient(ctx.rest, PODS);
    this.cache = nodeAndPodInformers(ctx.informers);
    const onNode = (old: NodeObject | undefined, n: NodeObject): void => {
      if (old !== undefined && JSON.stringify(noExecuteTaints(old)) === JSON.stringify(noExecuteTaints(n))) return;
      for (const p of this.cache.pods.lister.byIndex(NODE_INDEX, n.metadata?.name ?? '')) this.loop.enqueue(objectKey(p));
    };
    this.cache.nodes.addEventHandler({ onAdd: (n) => onNode(undefined, n), onUpdate: onNode });
    const onPod = (p: PodObject): void => {
      if (p.spec?.nodeName) this.loop.enqueue(objectKey(p));
    };
    this.cache.pods.addEventHandler({ onAdd: onPod, onUpdate: (_o, p) => onPod(p), onDelete: (p) => this.timer.forget(objectKey(deletedObject(p))) });
  }

  protected async reconcile(key: string): Promise<ReconcileResult | void> {
    const pod = this.cache.pods.lister.getByKey(key);
    const nodeName = pod?.spec?.nodeName;
    if (pod === undefined || !nodeName || pod.metadata?.deletionTimestamp) {
      this.timer.forget(key);
      return;
    }
    const taints = noExecuteTaints(this.cache.nodes.lister.get('', nodeName));
    const plan = this.timer.plan(key, evictionDelay(taints, pod.spec?.tolerations ?? []));
    switch (plan.kind) {
      case 'none':
        if (plan.cancelled) this.recorder.event(pod, 'Normal', 'TaintManagerEviction', `Cancelling deletion of Pod ${key}`);
        return;
      case 'wait':
        return { requeueAfterMs: plan.ms };
      case 'evict': {
        this.log.info({ pod: key, node: nodeName, taints: taints.map((t) => t.key) }, 'evicting a pod from a NoExecute-tainted node');
        this.recorder.event(pod, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${key}`);
        const m = pod.metadata ?? {};
        try {
          await this.pods.delete(m.namespace ?? '', m.name ?? '', { preconditions: { uid: m.uid ?? '' } });
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
        this.timer.forget(key);
        return;
      }
    }
  }
}

export const taintEvictionFactory: ControllerFactory = (ctx) => new TaintEvictionController(ctx);
