// core/v1 Event: stored under a lease of --event-ttl (they expire as in Kubernetes), created on PUT too,
// selectable by involvedObject.*, reason, source and type (what `kubectl events --for` asks for).
import { fieldError } from '../../../api/field-errors.js';
import { FieldPath } from '../../../api/field-path.js';
import type { StoredObject } from '../../storage/interface.js';
import { humanAge } from '../table.js';
import { descriptor, rec, str, strategy } from './common.js';

function lastSeen(o: StoredObject, now: number): string {
  const t = o['lastTimestamp'] ?? rec(o['series'])['lastObservedTime'] ?? o['eventTime'] ?? o.metadata['creationTimestamp'];
  return humanAge(t, now);
}

export const eventStrategy = strategy({
  descriptor: descriptor({ group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] }),
  ttl: true,
  allowCreateOnUpdate: true,
  validate(o) {
    const io = rec(o['involvedObject']);
    const ns = str(io['namespace']);
    if (ns !== '' && ns !== (o.metadata.namespace ?? '')) return [fieldError.invalid(FieldPath.of('involvedObject', 'namespace'), ns, 'does not match event.namespace')];
    return [];
  },
  selectableFields(o) {
    const io = rec(o['involvedObject']);
    const f: Record<string, string> = {};
    for (const k of ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']) f[`involvedObject.${k}`] = str(io[k]);
    f['reason'] = str(o['reason']);
    f['reportingComponent'] = str(o['reportingComponent']);
    f['source'] = str(rec(o['source'])['component']);
    f['type'] = str(o['type']);
    return f;
  },
  columns: [
    { name: 'Last Seen', type: 'string', description: 'The time of the last occurrence.', priority: 0, cell: lastSeen },
    { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning).', priority: 0, cell: (o) => str(o['type']) },
    { name: 'Reason', type: 'string', description: 'This should be a short, machine understandable string that gives the reason for this event.', priority: 0, cell: (o) => str(o['reason']) },
    {
      name: 'Object',
      type: 'string',
      description: 'The object that this event is about.',
      priority: 0,
      cell: (o) => {
        const io = rec(o['involvedObject']);
        return `${str(io['kind']).toLowerCase()}/${str(io['name'])}`;
      },
    },
    { name: 'Message', type: 'string', description: 'A human-readable description of the status of this operation.', priority: 0, cell: (o) => str(o['message']) },
  ],
});
