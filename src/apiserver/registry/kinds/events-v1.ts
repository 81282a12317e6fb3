// events.k8s.io/v1 Event: the same objects under the same keys as core/v1 Events (Kubernetes stores both
// as core Events), converted field by field on the way in and out: regarding/involvedObject,
// note/message, reportingController/reportingComponent, the deprecated* fields/source, first and last
// timestamps and count.
import { fieldError } from '../../../api/field-errors.js';
import { FieldPath } from '../../../api/field-path.js';
import type { StoredObject } from '../../storage/interface.js';
import { descriptor, rec, str, strategy, type Obj } from './common.js';
import { eventStrategy } from './event.js';

/** Copies `from[a]` to `to[b]` when it is set. */
function move(from: Obj, a: string, to: Obj, b: string): void {
  const v = from[a];
  if (v !== undefined && v !== null && v !== '') to[b] = v;
}

const SHARED = ['metadata', 'eventTime', 'series', 'action', 'related', 'reason', 'type', 'reportingInstance'];

export function coreToEventsV1(o: StoredObject): StoredObject {
  const out: Obj = { apiVersion: 'events.k8s.io/v1', kind: 'Event' };
  for (const k of SHARED) move(o, k, out, k);
  move(o, 'involvedObject', out, 'regarding');
  move(o, 'message', out, 'note');
  out['reportingController'] = str(o['reportingComponent']) || str(rec(o['source'])['component']) || undefined;
  if (out['reportingController'] === undefined) delete out['reportingController'];
  move(o, 'source', out, 'deprecatedSource');
  move(o, 'firstTimestamp', out, 'deprecatedFirstTimestamp');
  move(o, 'lastTimestamp', out, 'deprecatedLastTimestamp');
  move(o, 'count', out, 'deprecatedCount');
  if (out['eventTime'] === undefined) out['eventTime'] = null;
  return out as StoredObject;
}

export function eventsV1ToCore(o: StoredObject): StoredObject {
  const out: Obj = { apiVersion: 'v1', kind: 'Event' };
  for (const k of SHARED) move(o, k, out, k);
  out['involvedObject'] = rec(o['regarding']);
  move(o, 'note', out, 'message');
  move(o, 'reportingController', out, 'reportingComponent');
  move(o, 'deprecatedSource', out, 'source');
  move(o, 'deprecatedFirstTimestamp', out, 'firstTimestamp');
  move(o, 'deprecatedLastTimestamp', out, 'lastTimestamp');
  move(o, 'deprecatedCount', out, 'count');
  return out as StoredObject;
}

export const eventsV1Strategy = strategy({
  descriptor: descriptor({ group: 'events.k8s.io', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] }),
  storageResource: 'events',
  ttl: true,
  allowCreateOnUpdate: true,
  convert: { toStored: eventsV1ToCore, fromStored: coreToEventsV1 },
  validate(o) {
    // events.k8s.io/v1 requires eventTime and a reporting controller and instance (ValidateEventCreate).
    const errs = [];
    if (o['eventTime'] === undefined || o['eventTime'] === null) errs.push(fieldError.required(FieldPath.of('eventTime')));
    if (str(o['reportingController']) === '') errs.push(fieldError.required(FieldPath.of('reportingController')));
    if (str(o['reportingInstance']) === '') errs.push(fieldError.required(FieldPath.of('reportingInstance')));
    return errs;
  },
  // Selected on the stored (core) shape, with core's field names.
  ...(eventStrategy.selectableFields ? { selectableFields: eventStrategy.selectableFields } : {}),
});
