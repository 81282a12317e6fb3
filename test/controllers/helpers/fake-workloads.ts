// The seam the workload controllers' unit tests drive: listers filled by hand (Indexers with the owner
// index) and writers that record every action and apply it to the listers, as the API server and the
// informer would, so a test can run sync after sync and read the outcome.
import { randomUUID } from 'node:crypto';
import type { EventRecorder, EventType } from '../../../src/client/event-recorder.js';
import { Indexer, OWNER_INDEX, ownerIndexFunc } from '../../../src/client/indexer.js';
import { objectKey, type KubeObject } from '../../../src/client/kube-object.js';
import type { Deployment, Pod, ReplicaSet } from '../../../src/controllers/apps-types.js';

export interface Action {
  readonly verb: string;
  readonly resource: string;
  readonly name: string;
  readonly detail?: unknown;
}

export interface RecordedEvent {
  readonly object: string;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

let counter = 0;

export class FakeWorkloads {
  readonly pods = new Indexer<Pod>({ [OWNER_INDEX]: ownerIndexFunc });
  readonly replicaSets = new Indexer<ReplicaSet>({ [OWNER_INDEX]: ownerIndexFunc });
  readonly deployments = new Indexer<Deployment>();
  readonly actions: Action[] = [];
  readonly events: RecordedEvent[] = [];
  /** When set, a pod create fails with this error (a webhook's denial). */
  createError: ((n: number) => Error | undefined) | undefined;
  /** Apply writes to the listers (as if the informer saw them at once); false leaves them in flight. */
  observe = true;
  private creates = 0;
  now = new Date('2026-01-01T00:10:00Z');

  readonly recorder: EventRecorder = {
    event: (obj: KubeObject, type: EventType, reason: string, message: string) => this.events.push({ object: objectKey(obj), type, reason, message }),
  };

  private rv = 1;
  stamp<T extends KubeObject>(o: T): T {
    o.metadata = { ...o.metadata, resourceVersion: String(++this.rv) };
    return o;
  }

  readonly podControl = {
    createPod: async (namespace: string, pod: Pod): Promise<Pod> => {
      const err = this.createError?.(this.creates++);
      this.actions.push({ verb: 'create', resource: 'pods', name: pod.metadata.generateName ?? '' });
      if (err) throw err;
      const created: Pod = this.stamp({ ...pod, metadata: { ...pod.metadata, namespace, name: `${pod.metadata.generateName ?? ''}${(++counter).toString(36)}`, uid: randomUUID(), creationTimestamp: this.now.toISOString() } });
      if (this.observe) this.pods.upsert(created);
      return created;
    },
    deletePod: async (namespace: string, name: string): Promise<void> => {
      this.actions.push({ verb: 'delete', resource: 'pods', name });
      if (this.observe) this.pods.removeKey(`${namespace}/${name}`);
    },
    patchPod: async (namespace: string, name: string, patch: unknown): Promise<void> => {
      this.actions.push({ verb: 'patch', resource: 'pods', name, detail: patch });
      const p = this.pods.get(namespace, name);
      const refs = (patch as { metadata: { ownerReferences: Pod['metadata']['ownerReferences'] | null } }).metadata.ownerReferences;
      if (p) this.pods.upsert(this.stamp({ ...p, metadata: { ...p.metadata, ...(refs ? { ownerReferences: refs } : { ownerReferences: [] }) } }));
    },
  };

  readonly rsWriter = {
    get: async (namespace: string, name: string): Promise<ReplicaSet> => {
      const rs = this.replicaSets.get(namespace, name);
      if (!rs) throw new Error(`no ReplicaSet ${namespace}/${name}`);
      return rs;
    },
    updateStatus: async (rs: ReplicaSet): Promise<ReplicaSet> => {
      this.actions.push({ verb: 'update-status', resource: 'replicasets', name: rs.metadata.name ?? '', detail: rs.status });
      const cur = this.replicaSets.get(rs.metadata.namespace ?? '', rs.metadata.name ?? '') ?? rs;
      const next = this.stamp({ ...cur, status: rs.status } as ReplicaSet);
      this.replicaSets.upsert(next);
      return next;
    },
  };

  readonly deploymentWriter = {
    getDeployment: async (namespace: string, name: string): Promise<Deployment> => {
      const d = this.deployments.get(namespace, name);
      if (!d) throw new Error(`no Deployment ${namespace}/${name}`);
      return d;
    },
    updateDeploymentStatus: async (d: Deployment): Promise<Deployment> => {
      this.actions.push({ verb: 'update-status', resource: 'deployments', name: d.metadata.name ?? '', detail: d.status });
      const cur = this.deployments.get(d.metadata.namespace ?? '', d.metadata.name ?? '') ?? d;
      const next = this.stamp({ ...cur, status: structuredClone(d.status) } as Deployment);
      this.deployments.upsert(next);
      return next;
    },
    patchDeploymentAnnotations: async (namespace: string, name: string, annotations: Record<string, string>): Promise<Deployment> => {
      this.actions.push({ verb: 'patch', resource: 'deployments', name, detail: annotations });
      const cur = this.deployments.get(namespace, name)!;
      const next = this.stamp({ ...cur, metadata: { ...cur.metadata, annotations: { ...cur.metadata.annotations, ...annotations } } } as Deployment);
      this.deployments.upsert(next);
      return next;
    },
    getReplicaSet: async (namespace: string, name: string): Promise<ReplicaSet> => this.rsWriter.get(namespace, name),
    createReplicaSet: async (namespace: string, rs: ReplicaSet): Promise<ReplicaSet> => {
      this.actions.push({ verb: 'create', resource: 'replicasets', name: rs.metadata.name ?? '', detail: rs.spec.replicas });
      if (this.replicaSets.get(namespace, rs.metadata.name ?? '')) throw new Error('exists');
      const created = this.stamp({ ...structuredClone(rs), metadata: { ...structuredClone(rs.metadata), namespace, uid: randomUUID(), generation: 1, creationTimestamp: new Date(this.now.getTime() + ++this.rv).toISOString() } });
      this.replicaSets.upsert(created);
      return created;
    },
    updateReplicaSet: async (rs: ReplicaSet): Promise<ReplicaSet> => {
      this.actions.push({ verb: 'update', resource: 'replicasets', name: rs.metadata.name ?? '', detail: rs.spec.replicas });
      const next = this.stamp(structuredClone(rs));
      this.replicaSets.upsert(next);
      return next;
    },
    deleteReplicaSet: async (namespace: string, name: string): Promise<void> => {
      this.actions.push({ verb: 'delete', resource: 'replicasets', name });
      this.replicaSets.removeKey(`${namespace}/${name}`);
    },
    patchReplicaSet: async (namespace: string, name: string, patch: unknown): Promise<void> => {
      this.actions.push({ verb: 'patch', resource: 'replicasets', name, detail: patch });
      const rs = this.replicaSets.get(namespace, name);
      const refs = (patch as { metadata: { ownerReferences: ReplicaSet['metadata']['ownerReferences'] | null } }).metadata.ownerReferences;
      if (rs) this.replicaSets.upsert(this.stamp({ ...rs, metadata: { ...rs.metadata, ownerReferences: refs ?? [] } }));
    },
  };

  actionsOf(verb: string, resource: string): Action[] {
    return this.actions.filter((a) => a.verb === verb && a.resource === resource);
  }
}

export function replicaSet(name: string, replicas: number, labels: Record<string, string> = { app: 'web' }, extra: Partial<ReplicaSet['spec']> = {}): ReplicaSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, generation: 1, resourceVersion: '1' },
    spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'img' }] } }, ...extra },
  };
}

export interface PodShape {
  node?: string;
  phase?: string;
  ready?: boolean;
  readySince?: string;
  created?: string;
  restarts?: number;
  cost?: number;
  owner?: ReplicaSet;
  labels?: Record<string, string>;
}

export function pod(name: string, s: PodShape = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      resourceVersion: '1',
      labels: s.labels ?? { app: 'web' },
      ...(s.created ? { creationTimestamp: s.created } : {}),
      ...(s.cost !== undefined ? { annotations: { 'controller.kubernetes.io/pod-deletion-cost': String(s.cost) } } : {}),
      ...(s.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: s.owner.metadata.name ?? '', uid: s.owner.metadata.uid ?? '', controller: true }] } : {}),
    },
    spec: { ...(s.node ? { nodeName: s.node } : {}) },
    status: {
      phase: s.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: s.ready === false ? 'False' : 'True', ...(s.readySince ? { lastTransitionTime: s.readySince } : {}) }],
      containerStatuses: [{ restartCount: s.restarts ?? 0 }],
    },
  };
}

export function deployment(name: string, replicas: number, extra: Partial<Deployment['spec']> = {}, image = 'img:1'): Deployment {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, generation: 1, resourceVersion: '1' },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'c', image }] } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      ...extra,
    },
  };
}
