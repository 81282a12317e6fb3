// An object's events as findings, Warning first and newest first; an event that repeats a condition's
// message (the ReplicaSet controller's `Error creating: <the condition's message>` included) is folded into
// that condition's evidence (who reported it, how often, when last) instead of said twice.
import type { KubeObject } from '../client/kube-object.js';
import { eventSource, eventTimeMs, type EventObject } from '../client/event-facts.js';
import type { Finding } from './why-types.js';

/** Normal events shown per object (Warnings are all shown, up to WARNINGS_SHOWN). */
const NORMALS_SHOWN = 2;
const WARNINGS_SHOWN = 5;

function count(e: EventObject): number {
  return e.series?.count ?? e.count ?? 1;
}

function lastTime(e: EventObject): string | undefined {
  const ms = eventTimeMs(e);
  return ms > 0 ? new Date(ms).toISOString() : undefined;
}

function repeats(eventMessage: string, conditionMessage: string | undefined): boolean {
  if (conditionMessage === undefined || conditionMessage === '') return false;
  return eventMessage === conditionMessage || (conditionMessage.length >= 16 && eventMessage.endsWith(`: ${conditionMessage}`));
}

export function eventFindings(events: readonly KubeObject[], findings: Finding[]): Finding[] {
  const sorted = [...(events as EventObject[])].sort((a, b) => eventTimeMs(b) - eventTimeMs(a));
  const out: Finding[] = [];
  let warnings = 0;
  let normals = 0;
  for (const e of sorted) {
    const message = (e.message ?? '').trim();
    const who = eventSource(e);
    const time = lastTime(e);
    const same = findings.findIndex((f) => repeats(message, f.evidence.message));
    if (same >= 0) {
      const f = findings[same];
      if (f && f.evidence.count === undefined) findings[same] = { ...f, evidence: { ...f.evidence, ...(who !== '' ? { who } : {}), count: count(e), ...(time !== undefined ? { time } : {}) } };
      continue;
    }
    const warning = e.type === 'Warning';
    if (warning ? warnings++ >= WARNINGS_SHOWN : normals++ >= NORMALS_SHOWN) continue;
    out.push({
      severity: warning ? 'warning' : 'info',
      source: 'event',
      summary: `${e.type ?? 'Normal'} ${e.reason ?? ''}: ${message}`,
      evidence: { ...(time !== undefined ? { time } : {}), ...(who !== '' ? { who } : {}), reason: e.reason ?? '', message, count: count(e) },
    });
  }
  return out.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'warning' ? -1 : 1));
}
