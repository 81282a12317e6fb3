// The pod garbage collector (Kubernetes' podgc): every --pod-gc period it deletes terminated pods beyond
// --terminated-pod-gc-threshold (oldest first), pods bound to a node that no longer exists (after the
// node has been missing for a quarantine, confirmed by a live lookup; the pod is first marked Failed with
// a DisruptionTarget condition, as Kubernetes does), and terminating pods that were never scheduled.
// Deletions are forced (grace 0): no agent is left to finish them.
import { isNotFound } from '../../client/api-status-error.js';
import { objectKey } from '../../client/kube-object.js';
import { ResourceClient } from '../../client/resource-client.js';
import { NODES, PODS } from '../../client/resource-types.js';
import type { Controller, ControllerContext } from '../controller.js';
import { LoopController, type ReconcileResult } from '../keyed-loop.js';
import { DEFAULT_LIFECYCLE_OPTIONS } from '../lifecycle-flags.js';
import { nodeAndPodInformers, type NodeObject, type PodObject } from '../node-lifecycle/node-types.js';
import { setCondition } from '../status-conditions.js';
import { planPodGc } from './pod-gc-plan.js';

export interface PodGcOptions {
  readonly terminatedPodGcThreshold: number;
  /** Kubernetes' gcCheckPeriod: 20 s. */
  readonly periodMs: number;
  /** Kubernetes' quarantineTime: 40 s a node must be missing before its pods go. */
  readonly quarantineMs: number;
}

export const DEFAULT_POD_GC_OPTIONS: PodGcOptions = { terminatedPodGcThreshold: DEFAULT_LIFECYCLE_OPTIONS.terminatedPodGcThreshold, periodMs: 20_000, quarantineMs: 40_000 };

const SWEEP = 'sweep';

export class PodGcController extends LoopController {
  private readonly cache: ReturnType<typeof nodeAndPodInformers>;
  private readonly pods: ResourceClient<PodObject>;
  private readonly nodes: ResourceClient<NodeObject>;
  /** Node name → monotonic ms when the cache was first seen without it. */
  private readonly missingSince = new Map<string, number>();

  constructor(
    ctx: ControllerContext,
    private readonly opts: PodGcOptions = DEFAULT_POD_GC_OPTIONS,
  ) {
    super(ctx, 'pod-garbage-collector');
    this.pods = new ResourceClient(ctx.rest, PODS);
    this.nodes = new ResourceClient(ctx.rest, NODES);
    this.cache = nodeAndPodInformers(ctx.informers);
  }

  override run(signal: AbortSignal, workers: number): Promise<void> {
    this.loop.enqueue(SWEEP);
    return super.run(signal, workers);
  }

  protected async reconcile(): Promise<ReconcileResult> {
    const now = this.ctx.clock.now();
    const plan = planPodGc({
      pods: this.cache.pods.lister.list(),
      nodeKnown: (n) => this.cache.nodes.lister.get('', n) !== undefined,
      nodeQuarantined: (n) => {
        const since = this.missingSince.get(n);
        return since !== undefined && now - since >= this.opts.quarantineMs;
      },
      terminatedThreshold: this.opts.terminatedPodGcThreshold,
    });
    for (const n of plan.missingNodes) if (!this.missingSince.has(n)) this.missingSince.set(n, now);
    for (const n of this.missingSince.keys()) if (!plan.missingNodes.has(n)) this.missingSince.delete(n);

    if (plan.terminated.length > 0) this.log.info({ count: plan.terminated.length, threshold: this.opts.terminatedPodGcThreshold }, 'deleting terminated pods over the threshold');
    for (const p of plan.terminated) await this.forceDelete(p);
    for (const [node, pods] of plan.orphaned) {
      if (await this.nodeExists(node)) {
        this.missingSince.delete(node);
        continue;
      }
      this.log.info({ node, pods: pods.length }, 'deleting pods bound to a node that no longer exists');
      for (const p of pods) await this.markFailedAndDelete(p, 'PodGC: node no longer exists');
    }
    for (const p of plan.unscheduledTerminating) await this.forceDelete(p);
    return { requeueAfterMs: this.opts.periodMs };
  }

  private async nodeExists(name: string): Promise<boolean> {
    try {
      await this.nodes.get('', name);
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /** As Kubernetes 1.26+: a pod still running is marked Failed with DisruptionTarget first, so its owner sees why. */
  private async markFailedAndDelete(p: PodObject, message: string): Promise<void> {
    const m = p.metadata ?? {};
    if (p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed') {
      const conditions = setCondition(p.status?.conditions, { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message }, this.ctx.clock.wallNow());
      try {
        await this.pods.patchStatus(m.namespace ?? '', m.name ?? '', 'merge', { status: { phase: 'Failed', conditions } });
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
    }
    await this.forceDelete(p);
  }

  private async forceDelete(p: PodObject): Promise<void> {
    const m = p.metadata ?? {};
    try {
      await this.pods.delete(m.namespace ?? '', m.name ?? '', { gracePeriodSeconds: 0, preconditions: { uid: m.uid ?? '' } });
    } catch (e) {
      if (isNotFound(e)) return;
      this.log.warn({ err: e, pod: objectKey(p) }, 'pod garbage collection: delete failed');
      throw e;
    }
  }
}

export const podGcFactory =
  (opts: PodGcOptions = DEFAULT_POD_GC_OPTIONS) =>
  (ctx: ControllerContext): Controller =>
    new PodGcController(ctx, opts);
