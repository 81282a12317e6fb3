// component-helpers' nodeaffinity matching: NodeSelectorTerms are ORed, a term's requirements ANDed, an
// empty term matches nothing; Gt and Lt compare the label as an integer; matchFields knows only
// metadata.name.

import type { Labels, NodeSelectorRequirement, NodeSelectorTerm } from '../api-types.js';

function parseInt64(s: string): number | undefined {
  return /^[+-]?[0-9]+$/.test(s) ? Number(s) : undefined;
}

export function requirementMatches(r: NodeSelectorRequirement, labels: Labels): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(v as string);
    case 'NotIn':
      return !has || !values.includes(v as string);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || values.length !== 1) return false;
      const a = parseInt64(v as string);
      const b = parseInt64(values[0] as string);
      if (a === undefined || b === undefined) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

function fieldMatches(r: NodeSelectorRequirement, nodeName: string): boolean {
  if (r.key !== 'metadata.name') return false;
  return requirementMatches(r, { 'metadata.name': nodeName });
}

export function termMatches(term: NodeSelectorTerm, labels: Labels, nodeName: string): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  return exprs.every((r) => requirementMatches(r, labels)) && fields.every((r) => fieldMatches(r, nodeName));
}

export function termsMatch(terms: readonly NodeSelectorTerm[], labels: Labels, nodeName: string): boolean {
  return terms.some((t) => termMatches(t, labels, nodeName));
}
