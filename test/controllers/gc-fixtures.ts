// Deployment → ReplicaSet → Pod chains made by hand with ownerReferences (controller: true,
// blockOwnerDeletion: true, as the workload controllers set them), so the collector is tested alone.
import type { KubeObject, OwnerReference } from '../../src/client/kube-object.js';
import type { ResourceClient } from '../../src/client/resource-client.js';

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };

export function ownerRef(o: KubeObject, block = true, controller = true): OwnerReference {
  return { apiVersion: o.apiVersion ?? '', kind: o.kind ?? '', name: o.metadata?.name ?? '', uid: o.metadata?.uid ?? '', controller, blockOwnerDeletion: block };
}

export interface Chain {
  readonly deployment: KubeObject;
  readonly replicaSet: KubeObject;
  readonly pods: KubeObject[];
}

export async function makeChain(
  c: { deployments: ResourceClient; replicasets: ResourceClient; pods: ResourceClient },
  ns: string,
  name: string,
  podCount = 2,
): Promise<Chain> {
  const deployment = await c.deployments.create({ metadata: { name, namespace: ns }, spec: { replicas: podCount, selector: { matchLabels: { app: 'web' } }, template } });
  const replicaSet = await c.replicasets.create({
    metadata: { name: `${name}-rs`, namespace: ns, ownerReferences: [ownerRef(deployment)] },
    spec: { replicas: podCount, selector: { matchLabels: { app: 'web' } }, template },
  });
  const pods: KubeObject[] = [];
  for (let i = 0; i < podCount; i++) {
    pods.push(await c.pods.create({ metadata: { name: `${name}-pod-${i}`, namespace: ns, labels: { app: 'web' }, ownerReferences: [ownerRef(replicaSet)] }, spec: template.spec }));
  }
  return { deployment, replicaSet, pods };
}
