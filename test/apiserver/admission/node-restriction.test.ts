// NodeRestriction's cases, from Kubernetes' documented behaviour of the plugin: a node writes the status
// of and deletes only pods bound to it, cannot relabel a pod through its status, cannot change its own
// taints, and cannot set node-restriction.kubernetes.io/ or unknown kubernetes.io labels; other users
// are not its business.
import { describe, expect, it } from 'vitest';
import { forbiddenNodeLabels, nodeRestrictionPlugin } from '../../../src/apiserver/admission/node-restriction.js';
import type { AdmissionAttributes } from '../../../src/apiserver/admission/interface.js';
import type { UserInfo } from '../../../src/apiserver/authn/user-info.js';
import { StatusError } from '../../../src/apiserver/status.js';
import type { StoredObject } from '../../../src/apiserver/storage/interface.js';
import { attrs } from './attrs.js';

const NODE: UserInfo = { name: 'system:node:n1', uid: '', groups: ['system:nodes', 'system:authenticated'] };
const ADMIN: UserInfo = { name: 'admin', uid: '', groups: ['system:masters', 'system:authenticated'] };
const plugin = nodeRestrictionPlugin();

const pod = (nodeName: string, labels: Record<string, string> = {}): StoredObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'ns', labels }, spec: { nodeName } });
const node = (labels: Record<string, string>, taints: unknown[] = []): StoredObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels }, spec: { taints } });

/** The Status message the plugin refused with, or undefined when it let the request through. */
function refusal(a: AdmissionAttributes): string | undefined {
  if (!plugin.handles(a)) return undefined;
  try {
    void plugin.validate?.(a);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    expect((e as StatusError).status.code).toBe(403);
    return (e as StatusError).status.message;
  }
}

const podStatus = (old: StoredObject, next: StoredObject, user = NODE): AdmissionAttributes =>
  attrs({ operation: 'UPDATE', subresource: 'status', name: 'web', oldObject: old, object: next, user });
const nodeWrite = (operation: 'CREATE' | 'UPDATE', next: StoredObject, old?: StoredObject): AdmissionAttributes =>
  attrs({ operation, resource: { group: '', version: 'v1', resource: 'nodes' }, kind: { group: '', version: 'v1', kind: 'Node' }, namespace: '', name: 'n1', object: next, ...(old ? { oldObject: old } : {}), user: NODE });

describe('NodeRestriction', () => {
  it('lets a node write the status of a pod bound to it, and refuses another node\'s pod', () => {
    expect(refusal(podStatus(pod('n1'), pod('n1')))).toBeUndefined();
    expect(refusal(podStatus(pod('n2'), pod('n2')))).toBe('pods "web" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself');
    expect(refusal(podStatus(pod(''), pod('')))).toContain('can only update pod status');
  });

  it('refuses a pod relabelled through its status', () => {
    expect(refusal(podStatus(pod('n1', { app: 'a' }), pod('n1', { app: 'b' })))).toBe('pods "web" is forbidden: node "n1" cannot update labels through pod status');
  });

  it('lets a node delete only pods bound to it', () => {
    const del = (old: StoredObject): AdmissionAttributes => attrs({ operation: 'DELETE', name: 'web', oldObject: old, user: NODE });
    expect(refusal(del(pod('n1')))).toBeUndefined();
    expect(refusal(del(pod('n2')))).toBe('pods "web" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself');
  });

  it('does not restrict other users', () => {
    expect(refusal(podStatus(pod('n2'), pod('n2'), ADMIN))).toBeUndefined();
  });

  it('keeps a node from changing its taints and from setting restricted labels', () => {
    const taint = { key: 'dedicated', value: 'x', effect: 'NoSchedule' };
    expect(refusal(nodeWrite('UPDATE', node({}, [taint]), node({}, [taint])))).toBeUndefined();
    expect(refusal(nodeWrite('UPDATE', node({}, []), node({}, [taint])))).toBe('nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    expect(refusal(nodeWrite('CREATE', node({ 'kubernetes.io/hostname': 'n1', tier: 'web' }, [taint])))).toBeUndefined();
    expect(refusal(nodeWrite('CREATE', node({ 'node-restriction.kubernetes.io/pool': 'a', 'kubernetes.io/role': 'master' })))).toBe(
      'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: kubernetes.io/role, node-restriction.kubernetes.io/pool',
    );
    expect(refusal(nodeWrite('UPDATE', node({ 'example.k8s.io/x': '1' }), node({})))).toBe('nodes "n1" is forbidden: is not allowed to modify labels: example.k8s.io/x');
  });

  it('knows the labels kubelet sets itself', () => {
    expect(forbiddenNodeLabels(['kubernetes.io/os', 'topology.kubernetes.io/zone', 'node.kubernetes.io/instance-type', 'kubelet.kubernetes.io/x', 'example.com/y'])).toEqual([]);
    expect(forbiddenNodeLabels(['a.node-restriction.kubernetes.io/z', 'k8s.io/q'])).toEqual(['a.node-restriction.kubernetes.io/z', 'k8s.io/q']);
  });
});
