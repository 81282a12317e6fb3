// coordination.k8s.io/v1 Lease: what leader election and node heartbeats write; created on PUT.
import { fieldError, type FieldError } from '../../../api/field-errors.js';
import { FieldPath } from '../../../api/field-path.js';
import type { StoredObject } from '../../storage/interface.js';
import { ageColumn, withName } from '../table.js';
import { descriptor, spec, str, strategy } from './common.js';

function validateLease(o: StoredObject): FieldError[] {
  const s = spec(o);
  const errs: FieldError[] = [];
  const d = s['leaseDurationSeconds'];
  if (typeof d === 'number' && d <= 0) errs.push(fieldError.invalid(FieldPath.of('spec', 'leaseDurationSeconds'), d, 'must be greater than 0'));
  const t = s['leaseTransitions'];
  if (typeof t === 'number' && t < 0) errs.push(fieldError.invalid(FieldPath.of('spec', 'leaseTransitions'), t, 'must be greater than or equal to 0'));
  return errs;
}

export const leaseStrategy = strategy({
  descriptor: descriptor({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true }),
  allowCreateOnUpdate: true,
  validate: validateLease,
  validateUpdate: validateLease,
  columns: withName([{ name: 'Holder', type: 'string', description: 'The holder of the lease.', priority: 0, cell: (o) => str(spec(o)['holderIdentity']) }, ageColumn]),
});
