// `setpoint agent --simulate N`: N KWOK-style nodes in one process, for scale tests and benchmarks. Each
// registers a Node (fixed, generous capacity), renews its Lease, and the pods bound to any of them are
// marked Running and Ready at once (no processes), and deletions are finished at once. Cheap for
// thousands of nodes: one pod informer for all of them, a bounded number of writes in flight, lease
// renewals spread over the renew interval, and node status posted at registration and then only every
// 5 minutes (kubelet's nodeStatusReportFrequency: the Lease is the heartbeat).
import type { Logger } from 'pino';
import { SharedInformerFactory } from '../client/informer-factory.js';
import type { SharedInformer } from '../client/informer.js';
import { deletedObject } from '../client/informer.js';
import { objectKey, type KubeObject } from '../client/kube-object.js';
import { ResourceClient } from '../client/resource-client.js';
import { PODS } from '../client/resource-types.js';
import type { RestClient } from '../client/rest-client.js';
import { WorkQueue } from '../client/work-queue.js';
import { isGoneOrReplaced, runWorkers } from './queue-workers.js';
import type { HostFacts } from './host-facts.js';
import { NodeLease } from './node-lease.js';
import type { NodeSettings } from './node-object.js';
import { NodeReporter } from './node-reporter.js';
import type { Pod, PodStatus } from './pod-types.js';

export interface SimulatedNodesOptions extends NodeSettings {
  readonly rest: RestClient;
  readonly count: number;
  /** Nodes are `<prefix>-<i>`, i from 0. */
  readonly prefix: string;
  /** Writes in flight at once (default 32). */
  readonly concurrency?: number;
  readonly log: Logger;
}

const STATUS_REPORT_MS = 5 * 60_000;
/** The pod conditions a simulated node holds True for a Running pod. */
const READY_CONDITIONS: ReadonlySet<string> = new Set(['Ready', 'ContainersReady']);

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function simulatedFacts(name: string, maxPods: number): HostFacts {
  const capacity = { cpu: '32', memory: '256Gi', pods: String(maxPods), 'ephemeral-storage': '1Ti' };
  return {
    capacity,
    allocatable: capacity,
    labels: {
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'amd64',
      type: 'simulated',
    },
    addresses: [
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: name },
    ],
    conditions: [
      { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
      { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
      { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
      { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
    ],
    nodeInfo: { operatingSystem: 'linux', architecture: 'amd64', kernelVersion: 'simulated', containerRuntimeVersion: 'setpoint-simulated://0.1.0', kubeletVersion: 'v1.32.0-setpoint' },
    limitsNote: '',
  };
}

/** The status of a pod on a simulated node: Running and Ready from the start, as KWOK's pod-fast stage. */
export function simulatedPodStatus(pod: Pod, podIP: string, now: Date): PodStatus {
  const at = rfc3339(now);
  const cond = (type: string): { type: string; status: 'True'; lastProbeTime: null; lastTransitionTime: string } => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: at });
  const cs = (c: { name: string; image?: string }): NonNullable<PodStatus['containerStatuses']>[number] => ({
    name: c.name,
    state: { running: { startedAt: at } },
    lastState: {},
    ready: true,
    started: true,
    restartCount: 0,
    image: c.image ?? '',
    imageID: '',
    containerID: `setpoint-simulated://${pod.metadata.uid ?? ''}-${c.name}`,
  });
  const st: PodStatus = {
    phase: 'Running',
    conditions: [cond('Initialized'), cond('Ready'), cond('ContainersReady'), cond('PodScheduled')],
    hostIP: '127.0.0.1',
    hostIPs: [{ ip: '127.0.0.1' }],
    podIP,
    podIPs: [{ ip: podIP }],
    startTime: at,
    containerStatuses: pod.spec.containers.map(cs),
  };
  const init = pod.spec.initContainers ?? [];
  if (init.length > 0) {
    st.initContainerStatuses = init.map((c) => ({ ...cs(c), state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: at, finishedAt: at } }, ready: true, started: false }));
  }
  return st;
}

export class SimulatedNodes {
  private readonly abort = new AbortController();
  private readonly factory: SharedInformerFactory;
  private readonly informer: SharedInformer<KubeObject>;
  private readonly pods: ResourceClient<KubeObject>;
  private readonly queue = new WorkQueue<string>();
  private readonly names: string[];
  private readonly nodeSet: Set<string>;
  private readonly reporters = new Map<string, NodeReporter>();
  private readonly leases = new Map<string, NodeLease>();
  private timers: NodeJS.Timeout[] = [];
  private workers: Promise<void>[] = [];
  private nextIP = 0;
  /** When each node's status was last posted because one of its pods had been marked not ready. */
  private readonly nodeReasserted = new Map<string, number>();
  private renewMs = 10_000;

  constructor(private readonly o: SimulatedNodesOptions) {
    this.names = Array.from({ length: o.count }, (_, i) => `${o.prefix}-${i}`);
    this.nodeSet = new Set(this.names);
    this.factory = new SharedInformerFactory(o.rest, { log: o.log });
    // One informer for every simulated node: the bound pods, filtered here by node name.
    this.informer = this.factory.informerFor<KubeObject>(PODS, { fieldSelector: 'spec.nodeName!=' });
    this.pods = new ResourceClient(o.rest, PODS);
    const add = (obj: KubeObject): void => {
      const node = (obj as unknown as Pod).spec?.nodeName;
      if (node !== undefined && this.nodeSet.has(node)) this.queue.add(objectKey(obj));
    };
    this.informer.addEventHandler({ onAdd: add, onUpdate: (_, obj) => add(obj), onDelete: (obj) => add(deletedObject(obj)) });
  }

  nodeNames(): readonly string[] {
    return this.names;
  }

  private async inParallel(items: readonly string[], fn: (item: string) => Promise<unknown>): Promise<void> {
    let next = 0;
    const run = async (): Promise<void> => {
      while (next < items.length && !this.abort.signal.aborted) {
        const item = items[next++];
        if (item !== undefined) await fn(item);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency ?? 32, items.length) }, run));
  }

  async start(): Promise<void> {
    const o = this.o;
    for (const name of this.names) {
      const reporter = new NodeReporter(o.rest, { name, labels: o.labels, taints: o.taints, port: 0 }, () => simulatedFacts(name, o.maxPods), o.log);
      this.reporters.set(name, reporter);
      this.leases.set(name, new NodeLease(o.rest, name, o.leaseDurationSeconds, o.log, () => reporter.uid));
    }
    await this.inParallel(this.names, (n) => this.reporters.get(n)?.maybePost(STATUS_REPORT_MS) ?? Promise.resolve());
    await this.inParallel(this.names, (n) => this.leases.get(n)?.renew() ?? Promise.resolve());
    // Each second renews the slice of leases whose turn it is, so N renewals spread over the interval;
    // a node whose status post failed is retried on its next turn.
    const renewMs = this.leases.get(this.names[0] ?? '')?.renewIntervalMs ?? 10_000;
    this.renewMs = renewMs;
    const slices = Math.max(1, Math.round(renewMs / 1000));
    let tick = 0;
    let busy = false;
    this.timers.push(
      setInterval(() => {
        if (busy) return;
        busy = true;
        const slice = this.names.filter((_, i) => i % slices === tick % slices);
        tick++;
        void this.inParallel(slice, async (n) => {
          await this.reporters.get(n)?.maybePost(STATUS_REPORT_MS);
          if (this.reporters.get(n)?.registered) await this.leases.get(n)?.renew();
        }).finally(() => (busy = false));
      }, 1000),
    );
    this.factory.start(this.abort.signal);
    if (!(await this.informer.waitForSync(this.abort.signal))) return;
    this.workers = runWorkers(this.queue, o.concurrency ?? 32, (k) => this.reconcile(k), o.log);
    o.log.info({ nodes: o.count, prefix: o.prefix }, 'simulated nodes started');
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.abort.abort();
    this.queue.shutDown();
    await Promise.allSettled(this.workers);
    await this.factory.stopped();
  }


  /**
   * A Running pod that is not Ready: the node controller marked it so (MarkPodsNotReady) while it judged
   * the node silent — its Lease renewals seen late on a loaded machine. The node is alive, so, as kubelet's
   * status manager puts back an API status that differs from its own, the pod is Ready again; the Node's
   * status goes first (at most once per renewal interval), or the controller, still seeing it Unknown,
   * would mark the pod again. Without this a pod stays Ready=False for good and its ReplicaSet never
   * counts it.
   */
  private async reassertReady(pod: Pod): Promise<void> {
    const conditions = pod.status?.conditions ?? [];
    const notTrue = conditions.filter((c) => READY_CONDITIONS.has(c.type) && c.status !== 'True');
    if (notTrue.length === 0) return;
    const node = pod.spec.nodeName ?? '';
    const now = Date.now();
    if (now - (this.nodeReasserted.get(node) ?? 0) >= this.renewMs) {
      this.nodeReasserted.set(node, now);
      await this.reporters.get(node)?.maybePost(0, now);
    }
    const at = rfc3339(new Date(now));
    const fixed = conditions.map((c) => (READY_CONDITIONS.has(c.type) && c.status !== 'True' ? { ...c, status: 'True' as const, lastTransitionTime: at } : c));
    await this.pods.patchStatus(pod.metadata.namespace ?? 'default', pod.metadata.name ?? '', 'merge', {
      metadata: { resourceVersion: pod.metadata.resourceVersion },
      status: { conditions: fixed },
    });
  }

  /** 10.<i>.<j>.<k>: addresses no one answers on, unique within this process. */
  private podIP(): string {
    const n = this.nextIP++ % (1 << 24);
    return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  }

  private async reconcile(key: string): Promise<void> {
    const pod = this.informer.lister.getByKey(key) as unknown as Pod | undefined;
    if (pod === undefined) return;
    const ns = pod.metadata.namespace ?? 'default';
    const name = pod.metadata.name ?? '';
    try {
      if (pod.metadata.deletionTimestamp !== undefined) {
        await this.pods.delete(ns, name, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid ?? '' } });
        return;
      }
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') return;
      if (phase === 'Running') return await this.reassertReady(pod);
      await this.pods.patchStatus(ns, name, 'merge', { status: simulatedPodStatus(pod, pod.status?.podIP ?? this.podIP(), new Date()) });
    } catch (e) {
      if (isGoneOrReplaced(e)) return;
      throw e;
    }
  }
}
