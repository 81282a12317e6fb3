// Events as the loops emit them (client-go's record.EventRecorder): `event(obj, type, reason, message)`
// never blocks and never throws; the recorder writes core/v1 Events through the API server in the
// background. This first version writes one Event per call; client-go's correlator (counting repeats into
// one Event, aggregating similar ones, a spam filter per object) belongs behind the same interface.
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.js';
import { realClock } from './clock.js';
import type { KubeObject } from './kube-object.js';
import { ResourceClient } from './resource-client.js';
import { EVENTS } from './resource-types.js';
import type { RestClient } from './rest-client.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  event(obj: KubeObject, type: EventType, reason: string, message: string): void;
}

export interface EventSource {
  /** `default-scheduler`, `replicaset-controller`, `kubelet`, … */
  readonly component: string;
  readonly host?: string;
}

export class ApiEventRecorder implements EventRecorder {
  private readonly events: ResourceClient;
  private inflight = new Set<Promise<unknown>>();

  constructor(
    rest: RestClient,
    private readonly source: EventSource,
    private readonly opts: { clock?: Clock; log?: Logger } = {},
  ) {
    this.events = new ResourceClient(rest, EVENTS);
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    const m = obj.metadata ?? {};
    const ns = m.namespace || 'default';
    const now = (this.opts.clock ?? realClock).wallNow().toISOString().replace(/\.\d+Z$/, 'Z');
    const body: KubeObject = {
      metadata: { name: `${m.name ?? 'unknown'}.${randomBytes(8).toString('hex')}`, namespace: ns },
      involvedObject: { kind: obj.kind, apiVersion: obj.apiVersion, name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion },
      reason,
      message,
      type,
      source: { component: this.source.component, ...(this.source.host !== undefined ? { host: this.source.host } : {}) },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: this.source.component,
      reportingInstance: this.source.host ?? '',
    };
    const p = this.events
      .create(body, { namespace: ns })
      .catch((e: unknown) => this.opts.log?.warn({ err: e, reason }, 'could not write an event'))
      .finally(() => this.inflight.delete(p));
    this.inflight.add(p);
  }

  /** Waits for the events written so far (for shutdown and tests). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
  }
}
