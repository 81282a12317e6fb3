// apps/v1 Deployment and ReplicaSet, with their specs, rollout strategy and status.
// Field names, types, list types, merge keys and defaults are Kubernetes' (k8s.io/api v0.32); the
// descriptions are short summaries of our own.

import { bool, enumOf, field, int32, int64, mapList, str, struct, typeTable } from './schema.js';
import type { TypeTable } from './schema.js';
import { typeMetaFields, apps, core, meta, INT_OR_STRING, TIME } from './type-refs.js';

export const appsV1Types: TypeTable = typeTable(
  struct(
    'io.k8s.api.apps.v1.RollingUpdateDeployment',
    'How fast a rolling update replaces pods.',
    {
      maxUnavailable: field(INT_OR_STRING, 'The most pods that may be unavailable during the update, a number or a percentage rounded down. Defaults to 25%.'),
      maxSurge: field(INT_OR_STRING, 'The most pods that may be created above the desired count, a number or a percentage rounded up. Defaults to 25%.'),
    },
  ),
  struct(
    'io.k8s.api.apps.v1.DeploymentStrategy',
    'How a deployment replaces old pods with new ones.',
    {
      type: field(enumOf('Recreate', 'RollingUpdate'), 'Recreate or RollingUpdate. Defaults to RollingUpdate.'),
      rollingUpdate: field(apps('RollingUpdateDeployment'), 'Parameters of a rolling update.'),
    },
  ),
  struct(
    'io.k8s.api.apps.v1.DeploymentSpec',
    'The desired state of a deployment.',
    {
      replicas: field(int32, 'The number of pods wanted. Defaults to 1.'),
      selector: field(meta('LabelSelector'), 'The pods the deployment manages; must match the template\'s labels. Immutable.', { required: true, emitted: true, pointer: true }),
      template: field(core('PodTemplateSpec'), 'The pods to create.', { required: true, emitted: true }),
      strategy: field(apps('DeploymentStrategy'), 'How to replace old pods with new ones.', { patch: 'retainKeys', emitted: true }),
      minReadySeconds: field(int32, 'Seconds a new pod must be ready before it counts as available.'),
      revisionHistoryLimit: field(int32, 'How many old ReplicaSets to keep for rollback. Defaults to 10.'),
      paused: field(bool, 'Stop rolling out changes.'),
      progressDeadlineSeconds: field(int32, 'Seconds before a stalled rollout is reported as failed. Defaults to 600.'),
    },
  ),
  struct(
    'io.k8s.api.apps.v1.DeploymentCondition',
    'One condition of a deployment, such as Available or Progressing.',
    {
      type: field(str, 'The condition\'s type.', { required: true, emitted: true }),
      status: field(str, 'True, False or Unknown.', { required: true, emitted: true }),
      lastUpdateTime: field(TIME, 'When the condition was last updated.', { emitted: true }),
      lastTransitionTime: field(TIME, 'When the condition last changed status.', { emitted: true }),
      reason: field(str, 'A CamelCase reason for the last transition.'),
      message: field(str, 'A human-readable explanation.'),
    },
  ),
  struct(
    'io.k8s.api.apps.v1.DeploymentStatus',
    'The observed state of a deployment.',
    {
      observedGeneration: field(int64, 'The generation the controller last acted on.'),
      replicas: field(int32, 'Pods targeted by the deployment.'),
      updatedReplicas: field(int32, 'Pods of the current template.'),
      readyReplicas: field(int32, 'Pods that are ready.'),
      availableReplicas: field(int32, 'Pods available for at least minReadySeconds.'),
      unavailableReplicas: field(int32, 'Pods still needed for the deployment to be fully available.'),
      conditions: field(mapList(apps('DeploymentCondition'), 'type'), 'The deployment\'s current conditions.', { patch: 'merge', mergeKey: 'type' }),
      collisionCount: field(int32, 'Hash collisions seen when naming ReplicaSets.'),
    },
  ),
  struct(
    'io.k8s.api.apps.v1.Deployment',
    'Declarative updates of pods through ReplicaSets.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      spec: field(apps('DeploymentSpec'), 'The desired state of the deployment.', { emitted: true }),
      status: field(apps('DeploymentStatus'), 'The observed state of the deployment.', { emitted: true }),
    },
    { gvk: [{ group: 'apps', version: 'v1', kind: 'Deployment' }] },
  ),
  struct(
    'io.k8s.api.apps.v1.ReplicaSetSpec',
    'The desired state of a ReplicaSet.',
    {
      replicas: field(int32, 'The number of pods wanted. Defaults to 1.'),
      minReadySeconds: field(int32, 'Seconds a new pod must be ready before it counts as available.'),
      selector: field(meta('LabelSelector'), 'The pods the ReplicaSet counts; must match the template\'s labels.', { required: true, emitted: true, pointer: true }),
      template: field(core('PodTemplateSpec'), 'The pods to create.', { emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.apps.v1.ReplicaSetCondition',
    'One condition of a ReplicaSet.',
    {
      type: field(str, 'The condition\'s type.', { required: true, emitted: true }),
      status: field(str, 'True, False or Unknown.', { required: true, emitted: true }),
      lastTransitionTime: field(TIME, 'When the condition last changed status.', { emitted: true }),
      reason: field(str, 'A CamelCase reason for the last transition.'),
      message: field(str, 'A human-readable explanation.'),
    },
  ),
  struct(
    'io.k8s.api.apps.v1.ReplicaSetStatus',
    'The observed state of a ReplicaSet.',
    {
      replicas: field(int32, 'The most recently observed number of pods.', { required: true, emitted: true }),
      fullyLabeledReplicas: field(int32, 'Pods whose labels match the template\'s.'),
      readyReplicas: field(int32, 'Pods that are ready.'),
      availableReplicas: field(int32, 'Pods available for at least minReadySeconds.'),
      observedGeneration: field(int64, 'The generation the controller last acted on.'),
      conditions: field(mapList(apps('ReplicaSetCondition'), 'type'), 'The ReplicaSet\'s current conditions.', { patch: 'merge', mergeKey: 'type' }),
    },
  ),
  struct(
    'io.k8s.api.apps.v1.ReplicaSet',
    'Keeps a number of identical pods running.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      spec: field(apps('ReplicaSetSpec'), 'The desired state of the ReplicaSet.', { emitted: true }),
      status: field(apps('ReplicaSetStatus'), 'The observed state of the ReplicaSet.', { emitted: true }),
    },
    { gvk: [{ group: 'apps', version: 'v1', kind: 'ReplicaSet' }] },
  ),
);
