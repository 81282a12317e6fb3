// The kinds Setpoint serves, as the client addresses them.
import type { ResourceType } from './resource-client.js';

const core = (resource: string, kind: string, namespaced = true): ResourceType => ({ group: '', version: 'v1', resource, kind, namespaced });

export const PODS = core('pods', 'Pod');
export const NODES = core('nodes', 'Node', false);
export const NAMESPACES = core('namespaces', 'Namespace', false);
export const EVENTS = core('events', 'Event');
export const CONFIGMAPS = core('configmaps', 'ConfigMap');
export const SECRETS = core('secrets', 'Secret');
export const SERVICEACCOUNTS = core('serviceaccounts', 'ServiceAccount');
export const DEPLOYMENTS: ResourceType = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true };
export const REPLICASETS: ResourceType = { group: 'apps', version: 'v1', resource: 'replicasets', kind: 'ReplicaSet', namespaced: true };
export const LEASES: ResourceType = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true };
export const EVENTS_V1: ResourceType = { group: 'events.k8s.io', version: 'v1', resource: 'events', kind: 'Event', namespaced: true };
export const PRIORITYCLASSES: ResourceType = { group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses', kind: 'PriorityClass', namespaced: false };
export const MUTATING_WEBHOOKS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource: 'mutatingwebhookconfigurations',
  kind: 'MutatingWebhookConfiguration',
  namespaced: false,
};
export const VALIDATING_WEBHOOKS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
};

export const BUILTIN_TYPES: readonly ResourceType[] = [
  PODS,
  NODES,
  NAMESPACES,
  EVENTS,
  CONFIGMAPS,
  SECRETS,
  SERVICEACCOUNTS,
  DEPLOYMENTS,
  REPLICASETS,
  LEASES,
  EVENTS_V1,
  PRIORITYCLASSES,
  MUTATING_WEBHOOKS,
  VALIDATING_WEBHOOKS,
];
