// The parts of a core/v1 Event its readers use (the CLI's `events` and `describe`, and `why`), and kubectl's
// readings of them: when it was last seen (series, lastTimestamp, eventTime) and who reported it. The age
// column, a display matter, is the CLI's (src/cli/kubectl-verbs/event-age.ts).
import type { KubeObject } from './kube-object.js';

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

/** kubectl's "From": the source component (", host" when known), else the reporting controller. */
export function eventSource(e: EventObject): string {
  const c = e.source?.component ?? '';
  if (c !== '') return e.source?.host ? `${c}, ${e.source.host}` : c;
  return e.reportingController ?? e.reportingComponent ?? '';
}

export function eventObjectRef(e: EventObject): string {
  return `${e.involvedObject?.kind ?? ''}/${e.involvedObject?.name ?? ''}`;
}
