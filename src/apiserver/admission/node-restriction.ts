// NodeRestriction, as Kubernetes' admission plugin of that name: what the node authorizer cannot judge
// from the request line alone, because it depends on the object. A node (`system:node:<name>`, group
// `system:nodes`) may write the status of, and delete, only pods bound to it (spec.nodeName), may not
// change a pod's labels through its status, may not change its own Node's taints, and may not set labels
// under node-restriction.kubernetes.io/ or kubernetes.io/ and k8s.io/ labels other than the ones kubelet
// sets itself. Kubernetes' messages; refusals are 403 `pods "x" is forbidden: node "n" …`.
import { nodeIdentity } from '../authz/node-authorizer.js';
import { StatusError, statuses } from '../status.js';
import type { StoredObject } from '../storage/interface.js';
import type { AdmissionPlugin } from './admission-chain.js';
import type { AdmissionAttributes } from './interface.js';

export const NODE_RESTRICTION = 'NodeRestriction';

/** The kubernetes.io / k8s.io labels kubelet sets on its Node (k8s.io/kubelet/pkg/apis's list). */
const KUBELET_LABELS: ReadonlySet<string> = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'node.kubernetes.io/windows-build',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
]);
/** Prefixes of kubelet-settable labels beyond the list (kubelet.kubernetes.io/…, node.kubernetes.io/…). */
const KUBELET_LABEL_NAMESPACES: readonly string[] = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

function labelNamespace(key: string): string {
  const i = key.indexOf('/');
  return i < 0 ? '' : key.slice(0, i);
}

const under = (ns: string, domain: string): boolean => ns === domain || ns.endsWith(`.${domain}`);

/** The labels of `changed` a node may not set (sorted, as Kubernetes lists them). */
export function forbiddenNodeLabels(changed: Iterable<string>): string[] {
  const out: string[] = [];
  for (const key of changed) {
    const ns = labelNamespace(key);
    if (under(ns, 'node-restriction.kubernetes.io')) out.push(key);
    else if ((under(ns, 'kubernetes.io') || under(ns, 'k8s.io')) && !KUBELET_LABELS.has(key) && !KUBELET_LABEL_NAMESPACES.some((d) => under(ns, d))) out.push(key);
  }
  return out.sort();
}

function labelsOf(o: StoredObject | undefined): Record<string, string> {
  const l = o?.metadata['labels'];
  return typeof l === 'object' && l !== null ? (l as Record<string, string>) : {};
}

/** Keys whose value differs between two label maps (added, removed or changed). */
function modifiedLabels(a: Record<string, string>, b: Record<string, string>): Set<string> {
  const out = new Set<string>();
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (a[k] !== b[k]) out.add(k);
  return out;
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  return modifiedLabels(a, b).size === 0;
}

const nodeNameOf = (o: StoredObject | undefined): string => String((o?.['spec'] as { nodeName?: unknown } | undefined)?.nodeName ?? '');
const taintsOf = (o: StoredObject | undefined): string => JSON.stringify((o?.['spec'] as { taints?: unknown } | undefined)?.taints ?? []);

function forbidden(attrs: AdmissionAttributes, why: string): StatusError {
  return new StatusError(statuses.forbidden({ group: attrs.resource.group, resource: attrs.resource.resource }, attrs.name, why));
}

function checkPod(node: string, attrs: AdmissionAttributes): void {
  if (attrs.subresource === 'status' && attrs.operation === 'UPDATE') {
    if (nodeNameOf(attrs.oldObject) !== node) throw forbidden(attrs, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
    if (!sameLabels(labelsOf(attrs.oldObject), labelsOf(attrs.object))) throw forbidden(attrs, `node "${node}" cannot update labels through pod status`);
  }
  if (attrs.subresource === '' && attrs.operation === 'DELETE' && nodeNameOf(attrs.oldObject) !== node) {
    throw forbidden(attrs, `node "${node}" can only delete pods with spec.nodeName set to itself`);
  }
}

function checkNode(node: string, attrs: AdmissionAttributes): void {
  if (attrs.operation === 'CREATE') {
    const bad = forbiddenNodeLabels(Object.keys(labelsOf(attrs.object)));
    if (bad.length > 0) throw forbidden(attrs, `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
  }
  if (attrs.operation === 'UPDATE') {
    if (taintsOf(attrs.object) !== taintsOf(attrs.oldObject)) throw forbidden(attrs, `node "${node}" is not allowed to modify taints`);
    const bad = forbiddenNodeLabels(modifiedLabels(labelsOf(attrs.object), labelsOf(attrs.oldObject)));
    if (bad.length > 0) throw forbidden(attrs, `is not allowed to modify labels: ${bad.join(', ')}`);
  }
}

export function nodeRestrictionPlugin(): AdmissionPlugin {
  return {
    name: NODE_RESTRICTION,
    handles: (attrs) => attrs.resource.group === '' && (attrs.resource.resource === 'pods' || attrs.resource.resource === 'nodes') && nodeIdentity(attrs.user) !== undefined,
    validate(attrs) {
      const node = nodeIdentity(attrs.user) ?? '';
      if (attrs.resource.resource === 'pods') checkPod(node, attrs);
      else checkNode(node, attrs);
    },
  };
}
