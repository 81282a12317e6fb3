// scheduling.k8s.io/v1 PriorityClass and admissionregistration.k8s.io/v1 Mutating- and
// ValidatingWebhookConfiguration: cluster-scoped configuration kinds with Kubernetes' defaults.
import { fieldError, type FieldError } from '../../../api/field-errors.js';
import type { StoredObject } from '../../storage/interface.js';
import { FieldPath } from '../../../api/field-path.js';
import { ageColumn, withName } from '../table.js';
import { arr, child, descriptor, rec, setDefault, str, strategy, type Obj } from './common.js';

export const priorityClassStrategy = strategy({
  descriptor: descriptor({ group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses', kind: 'PriorityClass', namespaced: false, shortNames: ['pc'] }),
  defaults(o) {
    setDefault(o, 'preemptionPolicy', 'PreemptLowerPriority');
  },
  validate(o) {
    if (o['value'] === undefined) return [fieldError.required(FieldPath.of('value'))];
    const v = o['value'];
    if (typeof v === 'number' && v > 1_000_000_000 && !(o.metadata.name ?? '').startsWith('system-')) {
      return [fieldError.forbidden(FieldPath.of('value'), 'maximum allowed value of a user defined priority is 1000000000')];
    }
    return [];
  },
  validateUpdate(o, old) {
    const errs = [];
    if (o['value'] !== old['value']) errs.push(fieldError.forbidden(FieldPath.of('value'), 'may not be changed in an update.'));
    if (o['preemptionPolicy'] !== old['preemptionPolicy']) errs.push(fieldError.immutable(FieldPath.of('preemptionPolicy'), o['preemptionPolicy']));
    return errs;
  },
  columns: withName([
    { name: 'Value', type: 'integer', description: 'The integer value of this priority class.', priority: 0, cell: (o) => o['value'] ?? 0 },
    { name: 'Global-Default', type: 'boolean', description: 'Whether this priority class is the default.', priority: 0, cell: (o) => o['globalDefault'] === true },
    ageColumn,
    { name: 'PreemptionPolicy', type: 'string', description: 'The policy for preempting pods with lower priority.', priority: 0, cell: (o) => str(o['preemptionPolicy']) },
  ]),
});

function defaultWebhook(w: Obj, mutating: boolean): void {
  setDefault(w, 'failurePolicy', 'Fail');
  setDefault(w, 'matchPolicy', 'Equivalent');
  setDefault(w, 'timeoutSeconds', 10);
  if (w['namespaceSelector'] === undefined) w['namespaceSelector'] = {};
  if (w['objectSelector'] === undefined) w['objectSelector'] = {};
  if (mutating) setDefault(w, 'reinvocationPolicy', 'Never');
  for (const r of arr(w['rules'])) setDefault(r, 'scope', '*');
  const svc = child(child(w, 'clientConfig'), 'service');
  if (Object.keys(svc).length === 0) delete (w['clientConfig'] as Obj)['service'];
  else setDefault(svc, 'port', 443);
}

function webhookStrategy(kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration') {
  const mutating = kind === 'MutatingWebhookConfiguration';
  return strategy({
    descriptor: descriptor({ group: 'admissionregistration.k8s.io', version: 'v1', resource: `${kind.toLowerCase()}s`, kind, namespaced: false, categories: ['api-extensions'] }),
    hasGeneration: true,
    defaults(o) {
      for (const w of arr(o['webhooks'])) defaultWebhook(w, mutating);
    },
    validate: validateWebhooks,
    validateUpdate: validateWebhooks,
    columns: withName([{ name: 'Webhooks', type: 'integer', description: 'Webhooks is a list of webhooks and the affected resources and operations.', priority: 0, cell: (o) => arr(o['webhooks']).length }, ageColumn]),
  });
}

function validateWebhooks(o: StoredObject): FieldError[] {
      return arr(o['webhooks']).flatMap((w, i) => {
        const p = FieldPath.of('webhooks').index(i);
        const errs = [];
        if (str(w['name']) === '') errs.push(fieldError.required(p.child('name')));
        if (!Array.isArray(w['admissionReviewVersions']) || w['admissionReviewVersions'].length === 0) errs.push(fieldError.required(p.child('admissionReviewVersions'), 'must specify one of v1, v1beta1'));
        const se = w['sideEffects'];
        if (se === undefined) errs.push(fieldError.required(p.child('sideEffects'), 'must specify one of None, NoneOnDryRun'));
        else if (se !== 'None' && se !== 'NoneOnDryRun') errs.push(fieldError.notSupported(p.child('sideEffects'), typeof se === 'string' ? se : String(se), ['None', 'NoneOnDryRun']));
        const t = w['timeoutSeconds'];
        if (typeof t === 'number' && (t < 1 || t > 30)) errs.push(fieldError.invalid(p.child('timeoutSeconds'), t, 'the timeout value must be between 1 and 30 seconds'));
        const cc = rec(w['clientConfig']);
        const hasUrl = str(cc['url']) !== '';
        const hasService = typeof cc['service'] === 'object' && cc['service'] !== null;
        if (hasUrl === hasService) errs.push(fieldError.required(p.child('clientConfig'), 'exactly one of url or service is required'));
        return errs;
      });
}

export const mutatingWebhookStrategy = webhookStrategy('MutatingWebhookConfiguration');
export const validatingWebhookStrategy = webhookStrategy('ValidatingWebhookConfiguration');
