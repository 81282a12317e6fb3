// The two writes every workload controller makes the same way: a delete guarded by the uid it decided on
// (a recreated object of the same name is never deleted by mistake) and a merge patch.
import type { KubeObject } from '../client/kube-object.js';
import type { ResourceClient } from '../client/resource-client.js';

export function uidDeleter<T extends KubeObject>(client: ResourceClient<T>): (namespace: string, name: string, uid: string) => Promise<void> {
  return async (namespace, name, uid) => {
    await client.delete(namespace, name, { preconditions: { uid } });
  };
}

export function mergePatcher<T extends KubeObject>(client: ResourceClient<T>): (namespace: string, name: string, patch: unknown) => Promise<void> {
  return async (namespace, name, patch) => {
    await client.patch(namespace, name, 'merge', patch);
  };
}
