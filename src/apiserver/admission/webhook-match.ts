// Which webhooks a request reaches, as Kubernetes decides it: a rule matches on operation, group, version,
// resource with its subresource (`pods`, `pods/status`, `pods/*`, `*/scale`, `*`, `*/*`) and scope; then the
// namespaceSelector (on the namespace's labels, or a Namespace's own) and the objectSelector (on the new or
// the old object's labels). The webhook configurations themselves are never sent to webhooks.
import type { StoredObject } from '../storage/interface.js';
import { StatusError, statuses } from '../status.js';
import type { AdmissionAttributes } from './interface.js';
import type { Webhook, WebhookRule } from './webhook-config.js';

/** The namespace labels come from the API server's namespace cache. */
export type NamespaceLabels = (namespace: string) => Promise<Readonly<Record<string, string>> | undefined>;

const EXEMPT = new Set(['admissionregistration.k8s.io/mutatingwebhookconfigurations', 'admissionregistration.k8s.io/validatingwebhookconfigurations']);

function wild(list: readonly string[], v: string): boolean {
  return list.some((x) => x === '*' || x === v);
}

function resourceMatches(resources: readonly string[], resource: string, subresource: string): boolean {
  return resources.some((r) => {
    const slash = r.indexOf('/');
    const res = slash < 0 ? r : r.slice(0, slash);
    const sub = slash < 0 ? '' : r.slice(slash + 1);
    return (res === '*' || res === resource) && (sub === '*' || sub === subresource);
  });
}

function isNamespaceObject(attrs: AdmissionAttributes): boolean {
  return attrs.resource.group === '' && attrs.resource.resource === 'namespaces';
}

function scopeMatches(scope: string, attrs: AdmissionAttributes): boolean {
  if (scope === '*' || scope === '') return true;
  // Namespaces are cluster-scoped objects, though their requests carry a namespace.
  if (scope === 'Namespaced') return !isNamespaceObject(attrs) && attrs.namespace !== '';
  if (scope === 'Cluster') return isNamespaceObject(attrs) || attrs.namespace === '';
  return false;
}

export function ruleMatches(rule: WebhookRule, attrs: AdmissionAttributes): boolean {
  const r = attrs.resource;
  return (
    scopeMatches(rule.scope, attrs) &&
    wild(rule.operations, attrs.operation) &&
    wild(rule.apiGroups, r.group) &&
    wild(rule.apiVersions, r.version) &&
    resourceMatches(rule.resources, r.resource, attrs.subresource)
  );
}

function labelsOf(o: StoredObject | undefined): Record<string, string> | undefined {
  const l = o?.metadata['labels'];
  return typeof l === 'object' && l !== null ? (l as Record<string, string>) : o === undefined ? undefined : {};
}

/** True when `hook` is to be called for this request; throws 404 for a namespaced request whose namespace is gone. */
export async function shouldCall(hook: Webhook, attrs: AdmissionAttributes, namespaceLabels: NamespaceLabels): Promise<boolean> {
  if (EXEMPT.has(`${attrs.resource.group}/${attrs.resource.resource}`)) return false;
  if (!hook.rules.some((r) => ruleMatches(r, attrs))) return false;
  if (!hook.namespaceSelector.isEmpty() && !(attrs.namespace === '' && !isNamespaceObject(attrs))) {
    let labels: Readonly<Record<string, string>> | undefined;
    if (isNamespaceObject(attrs)) labels = labelsOf(attrs.object ?? attrs.oldObject) ?? {};
    else {
      labels = await namespaceLabels(attrs.namespace);
      if (labels === undefined) throw new StatusError(statuses.notFound({ group: '', resource: 'namespaces' }, attrs.namespace));
    }
    if (!hook.namespaceSelector.matches(labels)) return false;
  }
  if (!hook.objectSelector.isEmpty()) {
    const now = labelsOf(attrs.object);
    const before = labelsOf(attrs.oldObject);
    if (!(now !== undefined && hook.objectSelector.matches(now)) && !(before !== undefined && hook.objectSelector.matches(before))) return false;
  }
  return true;
}
