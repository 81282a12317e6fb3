// core/v1 ConfigMap, Secret and ServiceAccount: plain data kinds. Secrets default to type Opaque and keep
// their type; keys of data are Kubernetes' config-map keys.
import { fieldError, type FieldError } from '../../../api/field-errors.js';
import { FieldPath } from '../../../api/field-path.js';
import { isConfigMapKey } from '../../../api/name-validation.js';
import type { StoredObject } from '../../storage/interface.js';
import { ageColumn, withName } from '../table.js';
import { descriptor, rec, setDefault, str, strategy } from './common.js';

function validateKeys(o: StoredObject, fields: readonly string[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of fields) {
    for (const k of Object.keys(rec(o[f]))) for (const m of isConfigMapKey(k)) errs.push(fieldError.invalid(FieldPath.of(f), k, m));
  }
  return errs;
}

function immutableData(o: StoredObject, old: StoredObject, fields: readonly string[]): FieldError[] {
  if (old['immutable'] !== true) return [];
  const errs: FieldError[] = [];
  if (o['immutable'] !== true) errs.push(fieldError.forbidden(FieldPath.of('immutable'), 'field is immutable when `immutable` is set'));
  for (const f of fields) if (JSON.stringify(o[f] ?? {}) !== JSON.stringify(old[f] ?? {})) errs.push(fieldError.forbidden(FieldPath.of(f), 'field is immutable when `immutable` is set'));
  return errs;
}

export const configMapStrategy = strategy({
  descriptor: descriptor({ group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] }),
  validate: (o) => validateKeys(o, ['data', 'binaryData']),
  validateUpdate: (o, old) => [...validateKeys(o, ['data', 'binaryData']), ...immutableData(o, old, ['data', 'binaryData'])],
  columns: withName([{ name: 'Data', type: 'integer', description: 'Data contains the configuration data.', priority: 0, cell: (o) => Object.keys(rec(o['data'])).length + Object.keys(rec(o['binaryData'])).length }, ageColumn]),
});

/** stringData is write-only: merged into data (base64), as the API server does. */
function mergeStringData(o: StoredObject): void {
  const sd = rec(o['stringData']);
  if (Object.keys(sd).length > 0) {
    const data = rec(o['data']);
    for (const [k, v] of Object.entries(sd)) data[k] = Buffer.from(str(v)).toString('base64');
    o['data'] = data;
  }
  delete o['stringData'];
}

export const secretStrategy = strategy({
  descriptor: descriptor({ group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true }),
  defaults(o) {
    setDefault(o, 'type', 'Opaque');
  },
  validate: (o) => validateKeys(o, ['data', 'stringData']),
  validateUpdate: (o, old) => {
    const errs = [...validateKeys(o, ['data']), ...immutableData(o, old, ['data'])];
    if (str(o['type']) !== str(old['type'])) errs.push(fieldError.immutable(FieldPath.of('type'), o['type']));
    return errs;
  },
  prepareForCreate: mergeStringData,
  prepareForUpdate: mergeStringData,
  selectableFields: (o) => ({ type: str(o['type']) }),
  columns: withName([
    { name: 'Type', type: 'string', description: 'Used to facilitate programmatic handling of secret data.', priority: 0, cell: (o) => str(o['type']) },
    { name: 'Data', type: 'integer', description: 'Data contains the secret data.', priority: 0, cell: (o) => Object.keys(rec(o['data'])).length },
    ageColumn,
  ]),
});

export const serviceAccountStrategy = strategy({
  descriptor: descriptor({ group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'] }),
  columns: withName([{ name: 'Secrets', type: 'integer', description: 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', priority: 0, cell: (o) => (Array.isArray(o['secrets']) ? o['secrets'].length : 0) }, ageColumn]),
});
