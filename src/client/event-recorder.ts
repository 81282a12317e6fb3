// Events as the loops emit them (client-go's record.EventRecorder): `event(obj, type, reason, message)`
// never blocks and never throws. Each event goes through client-go's correlator (repeats become a PATCH
// of count and lastTimestamp, similar ones are combined, a per-object spam filter drops the rest), then
// one writer sends them to the API server in order, as client-go's single sink goroutine does, so a
// repeat always builds on the Event its predecessor stored. At most 1000 wait; more are dropped, as
// client-go's broadcaster drops them (Events are a record for people, not state a loop reconciles from).
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import { isNotFound } from './api-status-error.js';
import type { Clock } from './clock.js';
import { realClock } from './clock.js';
import { EventCorrelator, type CoreEvent, type CorrelatorOptions } from './event-correlator.js';
import type { KubeObject } from './kube-object.js';
import { ResourceClient } from './resource-client.js';
import { EVENTS } from './resource-types.js';
import type { RestClient } from './rest-client.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  /** `fieldPath` names the part of the object the event is about (kubelet: `spec.containers{c}`). */
  event(obj: KubeObject, type: EventType, reason: string, message: string, fieldPath?: string): void;
}

export interface EventSource {
  /** `default-scheduler`, `replicaset-controller`, `kubelet`, … */
  readonly component: string;
  readonly host?: string;
}

const MAX_QUEUED = 1000;
const DROP_REPORT_MS = 10_000;

export class ApiEventRecorder implements EventRecorder {
  private readonly events: ResourceClient<CoreEvent>;
  private readonly clock: Clock;
  private readonly correlator: EventCorrelator;
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  /** Events dropped since the last report of drops. */
  private drops = 0;
  private lastDropReport: number | undefined;

  constructor(
    rest: RestClient,
    private readonly source: EventSource,
    private readonly opts: { clock?: Clock; log?: Logger; correlator?: Omit<CorrelatorOptions, 'clock'> } = {},
  ) {
    this.events = new ResourceClient<CoreEvent>(rest, EVENTS);
    this.clock = opts.clock ?? realClock;
    this.correlator = new EventCorrelator({ ...opts.correlator, clock: this.clock });
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string, fieldPath?: string): void {
    const m = obj.metadata ?? {};
    const ns = m.namespace || 'default';
    const now = this.clock.wallNow().toISOString().replace(/\.\d+Z$/, 'Z');
    const name = (): string => `${m.name ?? 'unknown'}.${randomBytes(8).toString('hex')}`;
    const ev: CoreEvent = {
      metadata: { name: name(), namespace: ns },
      involvedObject: {
        ...(obj.kind !== undefined ? { kind: obj.kind } : {}),
        ...(obj.apiVersion !== undefined ? { apiVersion: obj.apiVersion } : {}),
        ...(m.name !== undefined ? { name: m.name } : {}),
        ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
        ...(m.uid !== undefined ? { uid: m.uid } : {}),
        ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
        ...(fieldPath !== undefined ? { fieldPath } : {}),
      },
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
    const r = this.correlator.correlate(ev, name);
    if (r.skip) return;
    if (this.queued >= MAX_QUEUED) {
      this.dropped(reason);
      return;
    }
    this.queued++;
    this.tail = this.tail.then(() => this.write(r.event, r.patch)).finally(() => this.queued--);
  }

  /**
   * A dropped event is counted, and said once per DROP_REPORT_MS with the count: a line per drop (thousands
   * when a scheduler binds faster than its events are written) costs the process more than the events.
   */
  private dropped(reason: string): void {
    this.drops++;
    const now = this.clock.now();
    if (this.lastDropReport !== undefined && now - this.lastDropReport < DROP_REPORT_MS) return;
    this.lastDropReport = now;
    this.opts.log?.warn({ dropped: this.drops, reason, queued: this.queued }, 'event queue is full; dropping events');
    this.drops = 0;
  }

  private async write(event: CoreEvent, patch: { count: number; lastTimestamp: string; message: string } | undefined): Promise<void> {
    const ns = event.metadata.namespace;
    try {
      let stored: CoreEvent | undefined;
      if (patch !== undefined) {
        try {
          stored = await this.events.patch(ns, event.metadata.name, 'strategic', patch);
        } catch (e) {
          // The Event expired (--event-ttl) or was deleted: write it anew.
          if (!isNotFound(e)) throw e;
        }
      }
      if (stored === undefined) {
        const { resourceVersion: _rv, ...meta } = event.metadata;
        stored = await this.events.create({ ...event, metadata: meta }, { namespace: ns });
      }
      this.correlator.updateState(stored);
    } catch (e) {
      this.opts.log?.warn({ err: e, reason: event.reason }, 'could not write an event');
    }
  }

  /** Waits for the events recorded so far to be written (for shutdown and tests). */
  async flush(): Promise<void> {
    await this.tail;
  }
}
