// The scheduler's writes through the API server, as kube-scheduler makes them: pods/binding and the
// `Scheduled` event; for a pod that fits nowhere, PodScheduled=False reason Unschedulable with the
// FitError message (a status patch, only when the condition changes) and a `FailedScheduling` event
// (repeats are counted by the recorder's correlator); for preemption, a `Preempted` event on each victim,
// its deletion, and the preemptor's status.nominatedNodeName. Every write goes through `rest`, which
// carries the leader's fencing token, so a deposed scheduler's writes are refused.
import type { Logger } from 'pino';
import { isNotFound } from '../client/api-status-error.js';
import type { Clock } from '../client/clock.js';
import type { EventRecorder } from '../client/event-recorder.js';
import type { KubeObject } from '../client/kube-object.js';
import { ReconcileRecorder } from '../client/reconcile-recorder.js';
import { ResourceClient } from '../client/resource-client.js';
import { PODS } from '../client/resource-types.js';
import type { RestClient } from '../client/rest-client.js';
import type { Pod } from './api-types.js';
import { podKey } from './api-types.js';
import type { SchedulingDiagnosis } from './diagnosis.js';
import type { SchedulerSink } from './scheduler.js';

/** kube-scheduler truncates event notes to 1 KiB (events.k8s.io's limit), with an ellipsis. */
const MAX_EVENT_MESSAGE = 1024;
/** The diagnosis kept in the pod's reconcile record, at most (the record itself is bounded at 8 KiB). */
export const MAX_DIAGNOSIS_BYTES = 6 * 1024;

function truncate(msg: string): string {
  return msg.length <= MAX_EVENT_MESSAGE ? msg : `${msg.slice(0, MAX_EVENT_MESSAGE - 3)}...`;
}

/**
 * The diagnosis as the pod's record carries it: without the message and pod (the record has them), and with
 * as many node rejections as fit in `maxBytes` (the rest counted in nodesOmitted).
 */
export function boundDiagnosis(d: SchedulingDiagnosis, maxBytes = MAX_DIAGNOSIS_BYTES): Omit<SchedulingDiagnosis, 'pod' | 'message'> {
  const { pod: _pod, message: _message, ...rest } = d;
  const size = (o: unknown): number => Buffer.byteLength(JSON.stringify(o));
  let nodes = rest.nodes;
  let out = rest;
  let over = size(out) - maxBytes;
  while (over > 0 && nodes.length > 0) {
    // Drop about as many rejections as the excess takes, at least one.
    const per = size(nodes) / nodes.length;
    nodes = nodes.slice(0, Math.max(0, nodes.length - Math.max(1, Math.ceil(over / per))));
    out = { ...rest, nodes, nodesOmitted: rest.nodesOmitted + rest.nodes.length - nodes.length };
    over = size(out) - maxBytes;
  }
  return out;
}

function asObject(pod: Pod): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', ...pod } as unknown as KubeObject;
}

export interface ApiSinkOptions {
  /** Carries the fencing token when leader-elected. */
  readonly rest: RestClient;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  readonly log: Logger;
  /** Whose records these are on the pods (`default-scheduler`). */
  readonly schedulerName?: string;
}

export class ApiSchedulerSink implements SchedulerSink {
  private readonly pods: ResourceClient;
  /** The pods' records for `why`: the diagnosis while unschedulable, replaced by the binding. */
  readonly records: ReconcileRecorder;
  /** Binds sent and not yet answered (the loop holds back when too many are). */
  inflight = 0;

  constructor(private readonly o: ApiSinkOptions) {
    this.pods = new ResourceClient(o.rest, PODS);
    this.records = new ReconcileRecorder({ rest: o.rest, controller: o.schedulerName ?? 'default-scheduler', clock: o.clock, log: o.log });
  }

  async bind(pod: Pod, nodeName: string): Promise<void> {
    const ns = pod.metadata.namespace ?? 'default';
    this.inflight++;
    try {
      this.o.log.debug({ pod: podKey(pod), node: nodeName }, 'binding');
      await this.pods.bind(ns, pod.metadata.name, nodeName, pod.metadata.uid !== undefined ? { uid: pod.metadata.uid } : {});
    } finally {
      this.inflight--;
    }
    this.o.recorder.event(asObject(pod), 'Normal', 'Scheduled', `Successfully assigned ${ns}/${pod.metadata.name} to ${nodeName}`);
    // Only a pod that was reported unschedulable has a record to replace: a pod bound at once costs no write.
    const wasUnschedulable = (pod.status?.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False');
    if (wasUnschedulable || this.records.tracks(PODS, ns, pod.metadata.name)) {
      this.records.record(PODS, ns, pod.metadata.name, {
        ...(pod.metadata.uid !== undefined ? { uid: pod.metadata.uid } : {}),
        gap: { desired: { scheduled: true }, actual: { scheduled: true, nodeName } },
        action: `bind to ${nodeName}`,
        outcome: 'ok',
      });
      this.records.forget(PODS, ns, pod.metadata.name);
    }
  }

  async unschedulable(pod: Pod, message: string, diagnosis: SchedulingDiagnosis | undefined): Promise<void> {
    const ns = pod.metadata.namespace ?? 'default';
    this.o.log.info({ pod: podKey(pod), message, plugins: diagnosis?.plugins }, 'unable to schedule pod');
    this.o.recorder.event(asObject(pod), 'Warning', 'FailedScheduling', truncate(message));
    this.records.record(PODS, ns, pod.metadata.name, {
      ...(pod.metadata.uid !== undefined ? { uid: pod.metadata.uid } : {}),
      gap: { desired: { scheduled: true }, actual: { scheduled: false, feasibleNodes: 0, nodes: diagnosis?.numAllNodes ?? 0 } },
      action: diagnosis?.nominatedNodeName !== undefined ? `preempt on ${diagnosis.nominatedNodeName}` : 'wait',
      outcome: 'waiting',
      message: truncate(message),
      ...(diagnosis !== undefined ? { details: boundDiagnosis(diagnosis) } : {}),
    });
    const cur = (pod.status?.conditions ?? []).find((c) => c.type === 'PodScheduled');
    if (cur?.status === 'False' && cur.reason === 'Unschedulable' && cur.message === message) return;
    const condition = {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message,
      lastProbeTime: null,
      lastTransitionTime: cur?.status === 'False' && cur.lastTransitionTime !== undefined ? cur.lastTransitionTime : this.o.clock.wallNow().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    try {
      await this.pods.patchStatus(ns, pod.metadata.name, 'strategic', { status: { conditions: [condition] } });
    } catch (e) {
      // Deleted meanwhile: nothing to report on.
      if (!isNotFound(e)) throw e;
    }
  }

  async preempt(pod: Pod, nominatedNodeName: string, victims: readonly Pod[]): Promise<void> {
    const ns = pod.metadata.namespace ?? 'default';
    for (const v of victims) {
      this.o.recorder.event(asObject(v), 'Normal', 'Preempted', `Preempted by pod ${pod.metadata.uid ?? podKey(pod)} on node ${nominatedNodeName}`);
      try {
        await this.pods.delete(v.metadata.namespace ?? 'default', v.metadata.name, v.metadata.uid !== undefined ? { preconditions: { uid: v.metadata.uid } } : {});
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    if (pod.status?.nominatedNodeName === nominatedNodeName) return;
    try {
      await this.pods.patchStatus(ns, pod.metadata.name, 'merge', { status: { nominatedNodeName } });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
