// ObjectMeta validation as apimachinery's api/validation does it, for create and for update: names
// (or generateName) through the kind's name rule, namespace presence, labels, annotations and their
// 256 KiB total, owner references, finalizers, managedFields, and the fields an update may not change.
// Also generateName itself: the base trimmed to 58 bytes plus five random characters.

import { fieldError, renderBadValue } from './field-errors.js';
import type { FieldError } from './field-errors.js';
import { FieldPath } from './field-path.js';
import { isQualifiedName, isValidLabelValue, validateNamespaceName } from './name-validation.js';
import type { NameValidator } from './name-validation.js';

/** The parts of metav1.ObjectMeta that validation reads. */
export interface ObjectMeta {
  readonly name?: string;
  readonly generateName?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string | null;
  readonly deletionTimestamp?: string | null;
  readonly deletionGracePeriodSeconds?: number | null;
  readonly labels?: Readonly<Record<string, string>> | null;
  readonly annotations?: Readonly<Record<string, string>> | null;
  readonly ownerReferences?: readonly OwnerReference[] | null;
  readonly finalizers?: readonly string[] | null;
  readonly managedFields?: readonly ManagedFieldsEntryLike[] | null;
}

export interface OwnerReference {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly controller?: boolean | null;
  readonly blockOwnerDeletion?: boolean | null;
}

interface ManagedFieldsEntryLike {
  readonly manager?: string;
  readonly operation?: string;
  readonly fieldsType?: string;
  readonly subresource?: string;
}

/** The total size of all annotation keys and values, in bytes (TotalAnnotationSizeLimitB). */
export const totalAnnotationSizeLimitBytes = 256 * 1024;
export const isNegativeErrorMessage = 'must be greater than or equal to 0';
const fieldManagerMaxLength = 128;
const maxSubresourceNameLength = 256;
const orphanFinalizer = 'orphan';
const foregroundFinalizer = 'foregroundDeletion';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

export function validateLabelName(name: string, path: FieldPath): FieldError[] {
  return isQualifiedName(name).map((m) => fieldError.invalid(path, name, m));
}

/** metadata.labels: keys are qualified names, values label values; errors carry the labels path. */
export function validateLabels(labels: Readonly<Record<string, string>> | null | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    errs.push(...validateLabelName(k, path));
    for (const m of isValidLabelValue(v)) errs.push(fieldError.invalid(path, v, m));
  }
  return errs;
}

export function annotationsSize(annotations: Readonly<Record<string, string>> | null | undefined): number {
  let total = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) total += bytes(k) + bytes(v);
  return total;
}

/** metadata.annotations: keys are qualified names (checked lower-cased), 256 KiB in all. */
export function validateAnnotations(annotations: Readonly<Record<string, string>> | null | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of Object.keys(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(fieldError.invalid(path, k, m));
  }
  if (annotationsSize(annotations) > totalAnnotationSizeLimitBytes) errs.push(fieldError.tooLong(path, totalAnnotationSizeLimitBytes));
  return errs;
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

export function validateOwnerReferences(refs: readonly OwnerReference[] | null | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of refs ?? []) {
    const { group, version } = splitApiVersion(ref.apiVersion ?? '');
    const kind = ref.kind ?? '';
    if (version === '') errs.push(fieldError.invalid(path.child('apiVersion'), ref.apiVersion ?? '', 'version must not be empty'));
    if (kind === '') errs.push(fieldError.invalid(path.child('kind'), kind, 'kind must not be empty'));
    if ((ref.name ?? '') === '') errs.push(fieldError.invalid(path.child('name'), ref.name ?? '', 'name must not be empty'));
    if ((ref.uid ?? '') === '') errs.push(fieldError.invalid(path.child('uid'), ref.uid ?? '', 'uid must not be empty'));
    if (group === '' && version === 'v1' && kind === 'Event') {
      errs.push(fieldError.invalid(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref.controller === true) {
      const current = `${kind}/${ref.name ?? ''}`;
      if (firstController !== '') {
        errs.push(
          fieldError.invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

export function validateFinalizers(finalizers: readonly string[] | null | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of finalizers ?? []) for (const m of isQualifiedName(f)) errs.push(fieldError.invalid(path, f, m));
  const list = finalizers ?? [];
  if (list.includes(orphanFinalizer) && list.includes(foregroundFinalizer)) {
    errs.push(fieldError.invalid(path, list, `finalizer ${orphanFinalizer} and ${foregroundFinalizer} cannot be both set`));
  }
  return errs;
}

/** A fieldManager query parameter or managedFields manager: at most 128 bytes, printable. */
export function validateFieldManager(manager: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (bytes(manager) > fieldManagerMaxLength) errs.push(fieldError.tooLong(path, fieldManagerMaxLength));
  let pos = 0;
  for (const ch of manager) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 0x20 || (c >= 0x7f && c < 0xa0)) {
      const hex = c.toString(16).toUpperCase().padStart(4, '0');
      errs.push(fieldError.invalid(path, manager, `invalid character U+${hex} (at position ${pos})`));
    }
    pos += bytes(ch);
  }
  return errs;
}

export function validateManagedFields(entries: readonly ManagedFieldsEntryLike[] | null | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (entries ?? []).forEach((e, i) => {
    const p = path.index(i);
    if (e.operation !== 'Apply' && e.operation !== 'Update') {
      errs.push(fieldError.invalid(p.child('operation'), e.operation ?? '', 'must be `Apply` or `Update`'));
    }
    if ((e.fieldsType ?? '') !== '' && e.fieldsType !== 'FieldsV1') {
      errs.push(fieldError.invalid(p.child('fieldsType'), e.fieldsType, 'must be `FieldsV1`'));
    }
    errs.push(...validateFieldManager(e.manager ?? '', p.child('manager')));
    if (bytes(e.subresource ?? '') > maxSubresourceNameLength) errs.push(fieldError.tooLong(p.child('subresource'), maxSubresourceNameLength));
  });
  return errs;
}

export interface ObjectMetaRules {
  /** Whether the kind lives in a namespace. */
  readonly namespaced: boolean;
  /** The kind's rule for names (most kinds: nameIsDNSSubdomain; Namespaces: nameIsDNSLabel). */
  readonly name: NameValidator;
}

/** ValidateObjectMeta: what every create checks, in Kubernetes' order. */
export function validateObjectMeta(meta: ObjectMeta, rules: ObjectMetaRules, path: FieldPath = FieldPath.of('metadata')): FieldError[] {
  const errs: FieldError[] = [];
  const generateName = meta.generateName ?? '';
  if (generateName !== '') {
    for (const m of rules.name(generateName, true)) errs.push(fieldError.invalid(path.child('generateName'), generateName, m));
  }
  const name = meta.name ?? '';
  if (name === '') errs.push(fieldError.required(path.child('name'), 'name or generateName is required'));
  else for (const m of rules.name(name, false)) errs.push(fieldError.invalid(path.child('name'), name, m));
  const ns = meta.namespace ?? '';
  if (rules.namespaced) {
    if (ns === '') errs.push(fieldError.required(path.child('namespace')));
    else for (const m of validateNamespaceName(ns, false)) errs.push(fieldError.invalid(path.child('namespace'), ns, m));
  } else if (ns !== '') {
    errs.push(fieldError.forbidden(path.child('namespace'), 'not allowed on this type'));
  }
  if ((meta.generation ?? 0) < 0) errs.push(fieldError.invalid(path.child('generation'), meta.generation, isNegativeErrorMessage));
  errs.push(...validateLabels(meta.labels, path.child('labels')));
  errs.push(...validateAnnotations(meta.annotations, path.child('annotations')));
  errs.push(...validateOwnerReferences(meta.ownerReferences, path.child('ownerReferences')));
  errs.push(...validateFinalizers(meta.finalizers, path.child('finalizers')));
  errs.push(...validateManagedFields(meta.managedFields, path.child('managedFields')));
  return errs;
}

function immutable(newValue: unknown, oldValue: unknown, path: FieldPath): FieldError[] {
  const norm = (v: unknown): unknown => (v === undefined || v === '' ? null : v);
  return JSON.stringify(norm(newValue)) === JSON.stringify(norm(oldValue)) ? [] : [fieldError.immutable(path, newValue ?? '')];
}

/** ValidateObjectMetaUpdate: what every update checks against the stored object. */
export function validateObjectMetaUpdate(meta: ObjectMeta, old: ObjectMeta, path: FieldPath = FieldPath.of('metadata')): FieldError[] {
  const errs: FieldError[] = [];
  if ((old.deletionTimestamp ?? null) !== null) {
    const before = new Set(old.finalizers ?? []);
    const extra = [...new Set(meta.finalizers ?? [])].filter((f) => !before.has(f)).sort();
    if (extra.length > 0) {
      const found = renderBadValue(extra);
      errs.push(
        fieldError.forbidden(path.child('finalizers'), `no new finalizers can be added if the object is being deleted, found new finalizers ${found}`),
      );
    }
  }
  if ((meta.resourceVersion ?? '') === '') {
    errs.push(fieldError.invalid(path.child('resourceVersion'), meta.resourceVersion ?? '', 'must be specified for an update'));
  }
  if ((meta.generation ?? 0) < (old.generation ?? 0)) {
    errs.push(fieldError.invalid(path.child('generation'), meta.generation ?? 0, 'must not be decremented'));
  }
  errs.push(...immutable(meta.name, old.name, path.child('name')));
  errs.push(...immutable(meta.namespace, old.namespace, path.child('namespace')));
  errs.push(...immutable(meta.uid, old.uid, path.child('uid')));
  errs.push(...immutable(meta.creationTimestamp, old.creationTimestamp, path.child('creationTimestamp')));
  errs.push(...immutable(meta.deletionTimestamp, old.deletionTimestamp, path.child('deletionTimestamp')));
  errs.push(...immutable(meta.deletionGracePeriodSeconds, old.deletionGracePeriodSeconds, path.child('deletionGracePeriodSeconds')));
  errs.push(...validateLabels(meta.labels, path.child('labels')));
  errs.push(...validateAnnotations(meta.annotations, path.child('annotations')));
  errs.push(...validateOwnerReferences(meta.ownerReferences, path.child('ownerReferences')));
  errs.push(...validateManagedFields(meta.managedFields, path.child('managedFields')));
  return errs;
}

/** The longest base kept by generateName: 63 minus the five random characters. */
export const maxGeneratedNameLength = 58;
// utilrand's alphabet: no vowels (no words), no look-alike characters.
const randomAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The name Kubernetes' simple name generator makes from generateName. `random` returns numbers in
 * [0, 1); it is injected so that tests and simulations are reproducible.
 */
export function generateName(base: string, random: () => number): string {
  let b = base;
  if (bytes(b) > maxGeneratedNameLength) b = Buffer.from(b, 'utf8').subarray(0, maxGeneratedNameLength).toString('utf8');
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += randomAlphabet[Math.floor(random() * randomAlphabet.length) % randomAlphabet.length];
  return b + suffix;
}
