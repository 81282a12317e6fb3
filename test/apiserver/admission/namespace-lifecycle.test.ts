import { describe, expect, it } from 'vitest';
import { attrs } from './attrs.js';
import { namespaceLifecycle, type NamespaceLookup } from '../../../src/apiserver/admission/namespace-lifecycle.js';
import { StatusError } from '../../../src/apiserver/status.js';
import type { StoredObject } from '../../../src/apiserver/storage/interface.js';


function lookup(nss: Record<string, StoredObject>): NamespaceLookup {
  return { getNamespace: (n) => Promise.resolve(nss[n]) };
}

async function statusOfCall(p: Promise<void>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('NamespaceLifecycle', () => {
  it('admits creates in an active namespace', async () => {
    await namespaceLifecycle(attrs({}), lookup({ ns: { metadata: { name: 'ns' }, status: { phase: 'Active' } } }));
  });

  it('refuses creates in a terminating namespace with Kubernetes words', async () => {
    const e = await statusOfCall(namespaceLifecycle(attrs({}), lookup({ ns: { metadata: { name: 'ns' }, status: { phase: 'Terminating' } } })));
    expect(e.status.code).toBe(403);
    expect(e.status.reason).toBe('Forbidden');
    expect(e.status.message).toBe('pods "x" is forbidden: unable to create new content in namespace ns because it is being terminated');
    expect(e.status.details).toMatchObject({ name: 'x', kind: 'pods' });
  });

  it('refuses creates in a missing namespace with NotFound', async () => {
    const e = await statusOfCall(namespaceLifecycle(attrs({}), lookup({})));
    expect(e.status.code).toBe(404);
    expect(e.status.message).toBe('namespaces "ns" not found');
  });

  it('refuses deleting kube-system and allows deleting others', async () => {
    const del = { operation: 'DELETE' as const, resource: { group: '', version: 'v1', resource: 'namespaces' }, namespace: '' };
    const e = await statusOfCall(namespaceLifecycle(attrs({ ...del, name: 'kube-system' }), lookup({})));
    expect(e.status.code).toBe(403);
    await namespaceLifecycle(attrs({ ...del, name: 'other' }), lookup({}));
  });
});
