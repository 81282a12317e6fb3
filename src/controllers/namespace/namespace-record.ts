// The namespace controller's record on a Terminating Namespace, for `setpoint why` (docs/why-records.md):
// what content remains (objects per resource, the finalizers they carry) and what failed, with the same
// messages as its conditions. Pure: built from one pass's report.
import type { LoopReport } from '../../client/reconcile-recorder.js';
import { deletionConditions, type ContentReport } from './deletion-conditions.js';

const sorted = (m: ReadonlyMap<string, number>): Record<string, number> => Object.fromEntries([...m.entries()].sort(([a], [b]) => a.localeCompare(b)));

export function namespaceLoopReport(r: ContentReport, finalizer: string, uid: string | undefined): LoopReport {
  let remaining = 0;
  for (const n of r.remaining.values()) remaining += n;
  const actual: Record<string, unknown> = { remaining };
  if (r.remaining.size > 0) actual['resources'] = sorted(r.remaining);
  if (r.finalizers.size > 0) actual['finalizers'] = sorted(r.finalizers);
  const failures = r.discoveryFailures.length + r.deleteFailures.length;
  if (failures > 0) actual['failures'] = failures;
  const base = { gap: { desired: { remaining: 0 }, actual }, ...(uid !== undefined ? { uid } : {}) };
  if (failures === 0 && remaining === 0) return { ...base, action: `remove finalizer ${finalizer}`, outcome: 'ok' };
  // The True conditions say it as `kubectl describe ns` does: failures, then what remains and its finalizers.
  const message = deletionConditions(r)
    .filter((c) => c.status === 'True')
    .map((c) => `${c.reason ?? ''}: ${c.message ?? ''}`)
    .join('; ');
  return { ...base, action: `delete content (${remaining} objects in ${r.remaining.size} resources remain)`, outcome: failures > 0 ? 'error' : 'waiting', message };
}
