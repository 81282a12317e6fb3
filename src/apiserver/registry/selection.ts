// A list's or watch's labelSelector and fieldSelector, parsed with Kubernetes' errors and compiled into the
// storage's Predicate. metadata.name and metadata.namespace work on every kind; a kind adds its own fields
// (pods spec.nodeName, events involvedObject.*), and naming any other field is Kubernetes' 400.
import { fieldLabelNotSupported, parseFieldSelector } from '../../api/field-selector.js';
import { parseSelector, type Labels } from '../../api/labels-selector.js';
import type { Predicate, StoredObject } from '../storage/interface.js';
import type { Strategy } from './strategy.js';

export function objectFields(strategy: Strategy, obj: StoredObject): Record<string, string> {
  const base: Record<string, string> = { 'metadata.name': obj.metadata.name ?? '' };
  if (strategy.descriptor.namespaced) base['metadata.namespace'] = obj.metadata.namespace ?? '';
  return { ...base, ...strategy.selectableFields?.(obj) };
}

/** Throws ApiError (400) for a malformed selector or a field the kind cannot select on. */
export function predicateFrom(strategy: Strategy, query: URLSearchParams): Predicate {
  const labels = parseSelector(query.get('labelSelector') ?? '');
  const fields = parseFieldSelector(query.get('fieldSelector') ?? '');
  if (!fields.isEmpty()) {
    // The set of names a kind supports does not depend on the object: probe one with no fields.
    const known = new Set(Object.keys(objectFields(strategy, { metadata: {} })));
    for (const r of fields.requirements) if (!known.has(r.field)) throw fieldLabelNotSupported(r.field);
  }
  const labelsEmpty = labels.requirements.length === 0 && !labels.matchesNothing;
  const empty = labelsEmpty && fields.isEmpty();
  return {
    empty,
    matches: (o) =>
      (labelsEmpty || labels.matches(o.metadata['labels'] as Labels | undefined)) && (fields.isEmpty() || fields.matches(objectFields(strategy, o))),
  };
}
