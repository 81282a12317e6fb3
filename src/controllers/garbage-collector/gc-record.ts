// The garbage collector's record on an owner deleted in the foreground, for `setpoint why`
// (docs/why-records.md): which dependents still hold its deletion (blockOwnerDeletion), which of them are
// going already, and how many others remain that do not block it. Pure: built from the dependency graph.
import type { LoopReport } from '../../client/reconcile-recorder.js';
import { FOREGROUND_FINALIZER } from './finalizers.js';
import type { GraphNode } from './dependency-graph.js';

/** Dependents named in the record's details; the rest are counted. */
export const DEPENDENTS_LISTED = 20;
/** Dependents named in the message. */
const DEPENDENTS_IN_MESSAGE = 5;

const refText = (d: GraphNode): string => `${d.type.resource}/${d.namespace !== '' ? `${d.namespace}/` : ''}${d.name}${d.beingDeleted ? ' (being deleted)' : ''}`;

export function foregroundReport(owner: GraphNode, dependents: readonly GraphNode[]): LoopReport {
  const blocking = dependents.filter((d) => d.owners.some((r) => r.uid === owner.uid && r.blockOwnerDeletion === true));
  const deleting = blocking.filter((d) => d.beingDeleted).length;
  const gap = { desired: { blockingDependents: 0 }, actual: { blockingDependents: blocking.length, beingDeleted: deleting, otherDependents: dependents.length - blocking.length } };
  const base = { gap, uid: owner.uid };
  if (blocking.length === 0) return { ...base, action: `remove finalizer ${FOREGROUND_FINALIZER}`, outcome: 'ok' };
  const named = blocking.slice(0, DEPENDENTS_IN_MESSAGE).map(refText).join(', ');
  const more = blocking.length > DEPENDENTS_IN_MESSAGE ? ` and ${blocking.length - DEPENDENTS_IN_MESSAGE} more` : '';
  return {
    ...base,
    action: `wait for ${blocking.length} dependents with blockOwnerDeletion`,
    outcome: 'waiting',
    message: `foreground deletion waits for dependents with blockOwnerDeletion: ${named}${more}`,
    details: {
      blocking: blocking.slice(0, DEPENDENTS_LISTED).map((d) => ({ resource: d.type.resource, namespace: d.namespace, name: d.name, uid: d.uid, beingDeleted: d.beingDeleted })),
      ...(blocking.length > DEPENDENTS_LISTED ? { blockingOmitted: blocking.length - DEPENDENTS_LISTED } : {}),
    },
  };
}
