// The node lifecycle controller (Kubernetes' pkg/controller/nodelifecycle): a node whose Lease in
// kube-node-lease and whose Ready heartbeat have not moved for --node-monitor-grace-period (or that never
// posted status within --node-startup-grace-period) gets Ready=Unknown, "Kubelet stopped posting node
// status."; the taints follow the Ready condition (unreachable or not-ready, NoSchedule and NoExecute;
// removed when it is True again); and the pods of a node that is not Ready get Ready=False. Evicting
// the pods under NoExecute taints is the taint eviction controller's part.
import { isNotFound } from '../../client/api-status-error.js';
import type { EventRecorder } from '../../client/event-recorder.js';
import { NODE_INDEX } from '../../client/indexer.js';
import type { SharedInformer } from '../../client/informer.js';
import { TokenBucket } from '../../client/rate-limiter.js';
import { ReconcileRecorder } from '../../client/reconcile-recorder.js';
import { ResourceClient } from '../../client/resource-client.js';
import { LEASES, NODES, PODS } from '../../client/resource-types.js';
import type { Controller, ControllerContext } from '../controller.js';
import { LoopController, type ReconcileResult } from '../keyed-loop.js';
import { DEFAULT_LIFECYCLE_OPTIONS, type LifecycleOptions } from '../lifecycle-flags.js';
import { findCondition, rfc3339Seconds, setCondition, type StatusCondition } from '../status-conditions.js';
import { NodeHealthTracker } from './node-health.js';
import { nodeLoopReport, type NodeReconcileFacts } from './node-record.js';
import { desiredTaints, noExecuteTaints, sameTaints, startsNoExecute, withoutNoExecute } from './node-taints.js';
import { NODE_LEASE_NAMESPACE, nodeAndPodInformers, type LeaseObject, type NodeObject, type NodeTaint, type PodObject } from './node-types.js';
import { evictionDelay } from './taint-eviction.js';

/** The conditions besides Ready that go Unknown with it (Kubernetes' remainingNodeConditionTypes). */
const OTHER_CONDITIONS = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

export class NodeLifecycleController extends LoopController {
  private readonly nodesInf: SharedInformer<NodeObject>;
  private readonly podsInf: SharedInformer<PodObject>;
  private readonly leasesInf: SharedInformer<LeaseObject>;
  private readonly nodes: ResourceClient<NodeObject>;
  private readonly pods: ResourceClient<PodObject>;
  private readonly health: NodeHealthTracker;
  private readonly recorder: EventRecorder;
  private readonly lastReady = new Map<string, string | undefined>();
  private readonly evictionRate: TokenBucket;
  /** Records on nodes that are not Ready (and the one that says a node is Ready again): healthy nodes cost no writes. */
  readonly records: ReconcileRecorder;

  constructor(
    ctx: ControllerContext,
    private readonly opts: LifecycleOptions = DEFAULT_LIFECYCLE_OPTIONS,
  ) {
    super(ctx, 'node-lifecycle');
    this.health = new NodeHealthTracker(ctx.clock);
    // Kubernetes' EvictionRateLimiterBurst is 1.
    this.evictionRate = new TokenBucket(opts.nodeEvictionRate, 1, ctx.clock);
    this.recorder = ctx.recorderFor('node-controller');
    this.records = new ReconcileRecorder({ rest: ctx.rest, controller: 'node-lifecycle-controller', clock: ctx.clock, log: this.log });
    this.nodes = new ResourceClient(ctx.rest, NODES);
    this.pods = new ResourceClient(ctx.rest, PODS);
    ({ nodes: this.nodesInf, pods: this.podsInf } = nodeAndPodInformers(ctx.informers));
    this.leasesInf = ctx.informers.informerFor<LeaseObject>(LEASES);
    const onNode = (n: NodeObject): void => this.loop.enqueue(n.metadata?.name ?? '');
    this.nodesInf.addEventHandler({ onAdd: onNode, onUpdate: (_o, n) => onNode(n) });
    const onLease = (l: LeaseObject): void => {
      if (l.metadata?.namespace === NODE_LEASE_NAMESPACE) this.loop.enqueue(l.metadata.name ?? '');
    };
    this.leasesInf.addEventHandler({ onAdd: onLease, onUpdate: (_o, l) => onLease(l) });
    // A pod arriving on a node that is not Ready is marked at once, as Kubernetes' processPod does.
    const onPod = (p: PodObject): void => {
      const node = p.spec?.nodeName;
      if (node && this.lastReady.has(node) && this.lastReady.get(node) !== 'True') this.loop.enqueue(node);
    };
    this.podsInf.addEventHandler({ onAdd: onPod, onUpdate: (_o, p) => onPod(p) });
  }

  protected async reconcile(name: string): Promise<ReconcileResult | void> {
    let node = this.nodesInf.lister.get('', name);
    if (node === undefined) {
      this.health.forget(name);
      this.lastReady.delete(name);
      this.records.forget(NODES, '', name);
      return;
    }
    const ready = findCondition(node.status?.conditions, 'Ready');
    const lease = this.leasesInf.lister.get(NODE_LEASE_NAMESPACE, name);
    this.health.observe(name, ready?.['lastHeartbeatTime'] as string | undefined, lease?.spec?.renewTime);
    const h = this.health.judge(name, ready !== undefined, { gracePeriodMs: this.opts.nodeMonitorGracePeriodMs, startupGracePeriodMs: this.opts.nodeStartupGracePeriodMs });
    const markedUnknown = h.kind === 'silent' && ready?.status !== 'Unknown';
    if (markedUnknown) {
      node = await this.markUnknown(node, h.reason, h.message);
      if (node === undefined) return;
    }
    const taintsBefore = node.spec?.taints ?? [];
    const now = this.ctx.clock.wallNow();
    let taints = desiredTaints(node, rfc3339Seconds(now));
    let heldBackMs: number | undefined;
    // --node-eviction-rate: a node newly tainted NoExecute takes a token; swapping unreachable for not-ready does not.
    if (startsNoExecute(node.spec?.taints, taints) && !this.evictionRate.tryTake()) {
      taints = withoutNoExecute(taints);
      heldBackMs = Math.ceil(1000 / Math.max(this.opts.nodeEvictionRate, 1e-6));
    }
    const eviction = startsNoExecute(taintsBefore, taints) ? this.evictionCounts(name, taints) : undefined;
    if (!sameTaints(taints, node.spec?.taints)) {
      this.log.info({ node: name, taints: taints.map((t) => `${t.key}:${t.effect}`) }, 'node taints follow its Ready condition');
      node = await this.nodes.patch('', name, 'merge', { metadata: { resourceVersion: node.metadata?.resourceVersion }, spec: { taints } });
    }
    const readyCond = findCondition(node.status?.conditions, 'Ready');
    const readyNow = readyCond?.status;
    const before = this.lastReady.get(name);
    this.lastReady.set(name, readyNow);
    let podsMarkedNotReady = 0;
    if (readyNow !== undefined && readyNow !== 'True') {
      if (before === 'True') this.recorder.event(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
      podsMarkedNotReady = await this.markPodsNotReady(name);
    }
    const renew = Date.parse(lease?.spec?.renewTime ?? '');
    this.report(node, {
      ready: readyNow,
      ...(typeof readyCond?.['reason'] === 'string' ? { readyReason: readyCond['reason'] } : {}),
      ...(typeof readyCond?.['message'] === 'string' ? { readyMessage: readyCond['message'] } : {}),
      silentForMs: this.health.silentForMs(name),
      graceMs: ready === undefined ? this.opts.nodeStartupGracePeriodMs : this.opts.nodeMonitorGracePeriodMs,
      leaseAgeMs: Number.isNaN(renew) ? undefined : Math.max(0, now.getTime() - renew),
      markedUnknown,
      taintsBefore,
      taintsAfter: node.spec?.taints ?? [],
      eviction,
      podsMarkedNotReady,
      heldBackMs,
    });
    // Look again when the grace runs out (a heartbeat or lease renewal brings it back sooner).
    if (heldBackMs !== undefined) return { requeueAfterMs: heldBackMs };
    if (h.kind === 'heard') return { requeueAfterMs: h.graceLeftMs + 1 };
  }

  /** A node not Ready is reported; a Ready one only when it had been (its record then says so), and then forgotten. */
  private report(node: NodeObject, facts: NodeReconcileFacts): void {
    const name = node.metadata?.name ?? '';
    // A node that has not posted Ready yet is within its startup grace (after it, it is Unknown): nothing to tell.
    if (facts.ready === undefined) return;
    const r = nodeLoopReport(facts, node.metadata?.uid);
    if (r.outcome === 'ok' && !this.records.tracks(NODES, '', name)) return;
    this.records.record(NODES, '', name, r);
    if (r.outcome === 'ok') this.records.forget(NODES, '', name);
  }

  /** What the NoExecute taints about to go on mean for the node's pods, as the taint eviction controller judges them. */
  private evictionCounts(nodeName: string, taints: NodeTaint[]): { now: number; later: number; never: number } {
    const noExecute = noExecuteTaints({ spec: { taints } });
    const counts = { now: 0, later: 0, never: 0 };
    for (const p of this.podsInf.lister.byIndex(NODE_INDEX, nodeName)) {
      if (p.metadata?.deletionTimestamp) continue;
      const d = evictionDelay(noExecute, p.spec?.tolerations ?? []);
      if (d.kind === 'never') counts.never++;
      else if (d.ms === 0) counts.now++;
      else counts.later++;
    }
    return counts;
  }

  /** Ready (and the pressure conditions it has) to Unknown, heartbeat times kept as last seen. */
  private async markUnknown(node: NodeObject, reason: string, message: string): Promise<NodeObject | undefined> {
    const name = node.metadata?.name ?? '';
    const now = this.ctx.clock.wallNow();
    let conditions: StatusCondition[] = node.status?.conditions ?? [];
    for (const type of ['Ready', ...OTHER_CONDITIONS]) {
      const old = findCondition(conditions, type);
      if (old === undefined && type !== 'Ready') continue;
      conditions = setCondition(conditions, { ...old, type, status: 'Unknown', reason, message }, now);
    }
    this.log.info({ node: name, reason }, 'node silent past its grace period: Ready=Unknown');
    try {
      return await this.nodes.patchStatus('', name, 'merge', { metadata: { resourceVersion: node.metadata?.resourceVersion }, status: { conditions } });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Kubernetes' MarkPodsNotReady: every pod on the node whose Ready condition is not False yet. Returns how many it marked. */
  private async markPodsNotReady(nodeName: string): Promise<number> {
    let marked = 0;
    const now = this.ctx.clock.wallNow();
    for (const pod of this.podsInf.lister.byIndex(NODE_INDEX, nodeName)) {
      const ready = findCondition(pod.status?.conditions, 'Ready');
      if (ready === undefined || ready.status === 'False') continue;
      const m = pod.metadata ?? {};
      const conditions = setCondition(pod.status?.conditions, { ...ready, status: 'False' }, now);
      try {
        await this.pods.patchStatus(m.namespace ?? '', m.name ?? '', 'merge', { metadata: { resourceVersion: m.resourceVersion }, status: { conditions } });
        this.recorder.event(pod, 'Warning', 'NodeNotReady', 'Node is not ready');
        marked++;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    return marked;
  }
}

export const nodeLifecycleFactory =
  (opts: LifecycleOptions = DEFAULT_LIFECYCLE_OPTIONS) =>
  (ctx: ControllerContext): Controller =>
    new NodeLifecycleController(ctx, opts);
