// metav1.LabelSelector (matchLabels and matchExpressions with In, NotIn, Exists, DoesNotExist): its
// validation with Kubernetes' messages, its conversion to a Selector (LabelSelectorAsSelector), the
// string Kubernetes prints for it (FormatLabelSelector, a Scale's status.selector) and the way back
// from a selector string (ParseToLabelSelector).

import { ApiError } from './api-error.js';
import { fieldError, goQuote } from './field-errors.js';
import type { FieldError } from './field-errors.js';
import type { FieldPath } from './field-path.js';
import { newRequirement, parseSelector, Selector } from './labels-selector.js';
import type { Requirement, SelectorOperator } from './labels-selector.js';
import { isValidLabelValue } from './name-validation.js';
import { validateLabelName, validateLabels } from './object-meta-validation.js';

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator | string;
  readonly values?: readonly string[] | null;
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>> | null;
  readonly matchExpressions?: readonly LabelSelectorRequirement[] | null;
}

export interface LabelSelectorValidationOptions {
  /** Tolerate invalid label values in expressions (for objects stored before the check existed). */
  readonly allowInvalidLabelValueInSelector?: boolean;
}

/** ValidateLabelSelector: what a Deployment's or ReplicaSet's spec.selector must satisfy. */
export function validateLabelSelector(
  ps: LabelSelector | null | undefined,
  path: FieldPath,
  opts: LabelSelectorValidationOptions = {},
): FieldError[] {
  if (ps === null || ps === undefined) return [];
  const errs = validateLabels(ps.matchLabels, path.child('matchLabels'));
  (ps.matchExpressions ?? []).forEach((expr, i) => {
    const p = path.child('matchExpressions').index(i);
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(fieldError.required(p.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) errs.push(fieldError.forbidden(p.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(fieldError.invalid(p.child('operator'), expr.operator, 'not a valid selector operator'));
    }
    errs.push(...validateLabelName(expr.key, p.child('key')));
    if (opts.allowInvalidLabelValueInSelector !== true) {
      values.forEach((v, j) => {
        for (const m of isValidLabelValue(v)) errs.push(fieldError.invalid(p.child('values').index(j), v, m));
      });
    }
  });
  return errs;
}

const toSelection: Record<LabelSelectorOperator, SelectorOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * LabelSelectorAsSelector: null selects nothing, an empty selector everything; otherwise the AND of
 * matchLabels (key=value) and matchExpressions. Throws (LABEL_SELECTOR_INVALID) on what validation rejects.
 */
export function labelSelectorAsSelector(ps: LabelSelector | null | undefined): Selector {
  if (ps === null || ps === undefined) return Selector.nothing();
  const labels = ps.matchLabels ?? {};
  const exprs = ps.matchExpressions ?? [];
  if (Object.keys(labels).length + exprs.length === 0) return Selector.everything();
  const reqs: Requirement[] = [];
  for (const [k, v] of Object.entries(labels)) reqs.push(newRequirement(k, '=', [v]));
  for (const e of exprs) {
    const op = (toSelection as Record<string, SelectorOperator | undefined>)[e.operator];
    if (op === undefined) throw new ApiError('LABEL_SELECTOR_INVALID', 'BadRequest', `${goQuote(e.operator)} is not a valid label selector operator`);
    reqs.push(newRequirement(e.key, op, [...(e.values ?? [])]));
  }
  return Selector.of(reqs);
}

/** FormatLabelSelector: the selector's string, "<none>" when empty and "<error>" when invalid. */
export function formatLabelSelector(ps: LabelSelector | null | undefined): string {
  let s: string;
  try {
    s = labelSelectorAsSelector(ps).toString();
  } catch {
    return '<error>';
  }
  return s.length === 0 ? '<none>' : s;
}

/** ParseToLabelSelector: a selector string back into matchLabels and matchExpressions. */
export function parseToLabelSelector(selector: string): LabelSelector {
  let sel: Selector;
  try {
    sel = parseSelector(selector);
  } catch (e) {
    throw new ApiError('LABEL_SELECTOR_INVALID', 'BadRequest', `couldn't parse the selector string "${selector}": ${(e as Error).message}`);
  }
  const matchLabels: Record<string, string> = {};
  const matchExpressions: LabelSelectorRequirement[] = [];
  for (const r of sel.requirements) {
    switch (r.operator) {
      case '=':
      case '==':
        matchLabels[r.key] = r.values[0] ?? '';
        break;
      case 'in':
        matchExpressions.push({ key: r.key, operator: 'In', values: [...new Set(r.values)].sort() });
        break;
      case 'notin':
        matchExpressions.push({ key: r.key, operator: 'NotIn', values: [...new Set(r.values)].sort() });
        break;
      case 'exists':
        matchExpressions.push({ key: r.key, operator: 'Exists', values: [] });
        break;
      case '!':
        matchExpressions.push({ key: r.key, operator: 'DoesNotExist', values: [] });
        break;
      case 'gt':
      case 'lt':
        throw new ApiError('LABEL_SELECTOR_INVALID', 'BadRequest', `${goQuote(r.operator)} isn't supported in label selectors`);
      case '!=':
        throw new ApiError('LABEL_SELECTOR_INVALID', 'BadRequest', `${goQuote(r.operator)} is not a valid label selector operator`);
    }
  }
  return { matchLabels, matchExpressions };
}
