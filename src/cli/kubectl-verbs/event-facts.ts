// The parts of a core/v1 Event the CLI shows (`events`, `describe`, `why`), and kubectl's readings of them:
// when it was last seen (series, lastTimestamp, eventTime), who reported it, and the age column
// `5m (x3 over 10m)`.
import type { KubeObject } from '../../client/kube-object.js';
import { humanAge } from '../../apiserver/registry/table.js';

export interface EventObject extends KubeObject {
  involvedObject?: { kind?: string; name?: string; namespace?: string; uid?: string; apiVersion?: string };
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string } | null;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  reportingController?: string;
}

/** kubectl events' sort key: series last observed, else lastTimestamp, else eventTime (ms; 0 when none). */
export function eventTimeMs(e: EventObject): number {
  const t = e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
  const ms = typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? 0 : ms;
}

export function sortEvents<T extends EventObject>(events: readonly T[]): T[] {
  return [...events].sort((a, b) => eventTimeMs(a) - eventTimeMs(b));
}

/** kubectl's age of an event: `10s`, or `2m (x4 over 10m)` when it repeated. */
export function eventAge(e: EventObject, now: number): string {
  if (e.series && (e.series.count ?? 0) > 1) return `${humanAge(e.series.lastObservedTime, now)} (x${e.series.count ?? 0} over ${humanAge(e.eventTime, now)})`;
  if ((e.count ?? 0) > 1) return `${humanAge(e.lastTimestamp, now)} (x${e.count ?? 0} over ${humanAge(e.firstTimestamp, now)})`;
  const first = e.firstTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
  return humanAge(first, now);
}

/** kubectl's "From": the source component (", host" when known), else the reporting controller. */
export function eventSource(e: EventObject): string {
  const c = e.source?.component ?? '';
  if (c !== '') return e.source?.host ? `${c}, ${e.source.host}` : c;
  return e.reportingController ?? e.reportingComponent ?? '';
}

export function eventObjectRef(e: EventObject): string {
  return `${e.involvedObject?.kind ?? ''}/${e.involvedObject?.name ?? ''}`;
}
