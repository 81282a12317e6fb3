// What the kinds' strategies share: their descriptors' defaults (every verb, no short names) and the small
// accessors that read decoded objects without trusting their shape.
import type { FieldError } from '../../../api/field-errors.js';
import { nameIsDNSSubdomain } from '../../../api/name-validation.js';
import type { ResourceDescriptor, SubresourceDescriptor, Verb } from '../../resource-registry.js';
import type { StoredObject } from '../../storage/interface.js';
import type { Strategy } from '../strategy.js';

export const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export type Obj = Record<string, unknown>;

export function rec(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

export function arr(v: unknown): Obj[] {
  return Array.isArray(v) ? v.map(rec) : [];
}

/** The object at `obj[k]`, made if missing (for defaulting in place). */
export function child(obj: Obj, k: string): Obj {
  const v = obj[k];
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Obj;
  const made: Obj = {};
  obj[k] = made;
  return made;
}

export function setDefault(obj: Obj, k: string, v: unknown): void {
  if (obj[k] === undefined || obj[k] === null || obj[k] === '') obj[k] = v;
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

export function statusSub(group: string, version: string, kind: string): SubresourceDescriptor {
  return { name: 'status', kind: { group, version, kind }, verbs: ['get', 'patch', 'update'] };
}

export function descriptor(d: Partial<ResourceDescriptor> & Pick<ResourceDescriptor, 'group' | 'version' | 'resource' | 'kind' | 'namespaced'>): ResourceDescriptor {
  return {
    singular: d.kind.toLowerCase(),
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [],
    ...d,
  };
}

const noErrors = (): FieldError[] => [];

/** A strategy with Kubernetes' most common answers; kinds override what differs. */
export function strategy(s: Partial<Strategy> & Pick<Strategy, 'descriptor'>): Strategy {
  return {
    nameRule: nameIsDNSSubdomain,
    hasStatus: false,
    hasGeneration: false,
    allowCreateOnUpdate: false,
    returnDeletedObject: false,
    validate: noErrors,
    validateUpdate: noErrors,
    ...s,
  };
}

export function spec(o: StoredObject): Obj {
  return rec(o['spec']);
}

export function status(o: StoredObject): Obj {
  return rec(o['status']);
}
