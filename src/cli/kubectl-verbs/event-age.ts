// kubectl's age column for an Event (`events`, `describe`): `10s`, or `5m (x3 over 10m)` when it repeated.
import { humanAge } from '../../apiserver/registry/table.js';
import type { EventObject } from '../../client/event-facts.js';

/** kubectl's age of an event: `10s`, or `2m (x4 over 10m)` when it repeated. */
export function eventAge(e: EventObject, now: number): string {
  if (e.series && (e.series.count ?? 0) > 1) return `${humanAge(e.series.lastObservedTime, now)} (x${e.series.count ?? 0} over ${humanAge(e.eventTime, now)})`;
  if ((e.count ?? 0) > 1) return `${humanAge(e.lastTimestamp, now)} (x${e.count ?? 0} over ${humanAge(e.firstTimestamp, now)})`;
  const first = e.firstTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
  return humanAge(first, now);
}
