// core/v1 kinds other than Pod: Namespace, Node, Event, ConfigMap, Secret, ServiceAccount and Binding,
// with the references and taints they share with pods.
// Field names, types, list types, merge keys and defaults are Kubernetes' (k8s.io/api v0.32); the
// descriptions are short summaries of our own.

import { atomicList, bool, bytes, enumOf, field, granularMap, int32, int64, mapList, setList, str, struct, typeTable } from './schema.js';
import type { TypeTable } from './schema.js';
import { typeMetaFields, core, meta, MICRO_TIME, QUANTITY, TIME } from './type-refs.js';

export const coreV1Types: TypeTable = typeTable(
  struct(
    'io.k8s.api.core.v1.NamespaceSpec',
    'What a namespace needs before it can be removed.',
    {
      finalizers: field(atomicList(str), 'Finalizers that must run before the namespace is deleted.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NamespaceCondition',
    'One condition of a namespace.',
    {
      type: field(str, 'The condition\'s type.', { required: true, emitted: true }),
      status: field(str, 'True, False or Unknown.', { required: true, emitted: true }),
      lastTransitionTime: field(TIME, 'When the condition last changed.', { emitted: true }),
      reason: field(str, 'A CamelCase reason for the last transition.'),
      message: field(str, 'A human-readable explanation.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NamespaceStatus',
    'The observed state of a namespace.',
    {
      phase: field(enumOf('Active', 'Terminating'), 'Active or Terminating.'),
      conditions: field(mapList(core('NamespaceCondition'), 'type'), 'The namespace\'s current conditions.', { patch: 'merge', mergeKey: 'type' }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Namespace',
    'A scope for names, and the unit of many policies.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      spec: field(core('NamespaceSpec'), 'What the namespace needs before removal.', { emitted: true }),
      status: field(core('NamespaceStatus'), 'The observed state of the namespace.', { emitted: true }),
    },
    { gvk: [{ group: '', version: 'v1', kind: 'Namespace' }] },
  ),
  struct(
    'io.k8s.api.core.v1.LocalObjectReference',
    'A reference by name to an object in the same namespace.',
    {
      name: field(str, 'The name of the referenced object.', { default: '' }),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.api.core.v1.Taint',
    'Repels pods from a node unless they tolerate it.',
    {
      key: field(str, 'The taint\'s key.', { required: true, emitted: true }),
      value: field(str, 'The taint\'s value.'),
      effect: field(enumOf('NoExecute', 'NoSchedule', 'PreferNoSchedule'), 'NoSchedule, PreferNoSchedule or NoExecute.', { required: true, emitted: true }),
      timeAdded: field(TIME, 'When a NoExecute taint was added.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ConfigMapNodeConfigSource',
    'A ConfigMap holding node configuration (deprecated).',
    {
      namespace: field(str, 'The ConfigMap\'s namespace.', { required: true, emitted: true }),
      name: field(str, 'The ConfigMap\'s name.', { required: true, emitted: true }),
      uid: field(str, 'The ConfigMap\'s UID.'),
      resourceVersion: field(str, 'The ConfigMap\'s resource version.'),
      kubeletConfigKey: field(str, 'The key holding the kubelet configuration.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeConfigSource',
    'A source of node configuration (deprecated).',
    {
      configMap: field(core('ConfigMapNodeConfigSource'), 'A ConfigMap source.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeSpec',
    'The desired state of a node.',
    {
      podCIDR: field(str, 'The pod IP range assigned to the node.'),
      podCIDRs: field(setList(str), 'The pod IP ranges assigned to the node, one per family.', { patch: 'merge' }),
      providerID: field(str, 'The node\'s ID in its cloud provider.'),
      unschedulable: field(bool, 'Keep new pods off the node.'),
      taints: field(atomicList(core('Taint')), 'The node\'s taints.'),
      configSource: field(core('NodeConfigSource'), 'Deprecated; no longer used.'),
      externalID: field(str, 'Deprecated; not used.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeCondition',
    'One condition of a node, such as Ready.',
    {
      type: field(str, 'The condition\'s type.', { required: true, emitted: true }),
      status: field(str, 'True, False or Unknown.', { required: true, emitted: true }),
      lastHeartbeatTime: field(TIME, 'When the condition was last reported.', { emitted: true }),
      lastTransitionTime: field(TIME, 'When the condition last changed status.', { emitted: true }),
      reason: field(str, 'A CamelCase reason for the last transition.'),
      message: field(str, 'A human-readable explanation.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeAddress',
    'An address of a node.',
    {
      type: field(str, 'Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.', { required: true, emitted: true }),
      address: field(str, 'The address.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.DaemonEndpoint',
    'A port of a daemon on the node.',
    {
      Port: field(int32, 'The port number.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeDaemonEndpoints',
    'The ports of the daemons on a node.',
    {
      kubeletEndpoint: field(core('DaemonEndpoint'), 'The kubelet\'s port.', { emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeSystemInfo',
    'Facts about a node\'s system.',
    {
      machineID: field(str, 'The machine ID.', { required: true, emitted: true }),
      systemUUID: field(str, 'The system UUID.', { required: true, emitted: true }),
      bootID: field(str, 'The boot ID.', { required: true, emitted: true }),
      kernelVersion: field(str, 'The kernel version.', { required: true, emitted: true }),
      osImage: field(str, 'The operating system image.', { required: true, emitted: true }),
      containerRuntimeVersion: field(str, 'The container runtime and its version.', { required: true, emitted: true }),
      kubeletVersion: field(str, 'The kubelet version.', { required: true, emitted: true }),
      kubeProxyVersion: field(str, 'Deprecated; not reliable.', { required: true, emitted: true }),
      operatingSystem: field(str, 'The operating system.', { required: true, emitted: true }),
      architecture: field(str, 'The CPU architecture.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.ContainerImage',
    'An image present on a node.',
    {
      names: field(atomicList(str), 'The image\'s names.', { emitted: true }),
      sizeBytes: field(int64, 'The image\'s size.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.AttachedVolume',
    'A volume attached to a node.',
    {
      name: field(str, 'The volume\'s name.', { required: true, emitted: true }),
      devicePath: field(str, 'Where the device appears on the node.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeConfigStatus',
    'The state of a node\'s dynamic configuration (deprecated).',
    {
      assigned: field(core('NodeConfigSource'), 'The configuration assigned to the node.'),
      active: field(core('NodeConfigSource'), 'The configuration the node uses.'),
      lastKnownGood: field(core('NodeConfigSource'), 'The last configuration known to work.'),
      error: field(str, 'A problem applying the configuration.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeRuntimeHandlerFeatures',
    'Features a runtime handler supports.',
    {
      recursiveReadOnlyMounts: field(bool, 'Recursive read-only mounts.'),
      userNamespaces: field(bool, 'User namespaces.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeRuntimeHandler',
    'A runtime handler of the node.',
    {
      name: field(str, 'The handler\'s name; empty for the default.', { emitted: true }),
      features: field(core('NodeRuntimeHandlerFeatures'), 'The handler\'s features.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeFeatures',
    'Features the node supports.',
    {
      supplementalGroupsPolicy: field(bool, 'The supplementalGroupsPolicy field.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.NodeStatus',
    'The observed state of a node.',
    {
      capacity: field(granularMap(QUANTITY), 'The node\'s total resources.'),
      allocatable: field(granularMap(QUANTITY), 'The resources available to pods.'),
      phase: field(enumOf('Pending', 'Running', 'Terminated'), 'Deprecated; not set.'),
      conditions: field(mapList(core('NodeCondition'), 'type'), 'The node\'s current conditions.', { patch: 'merge', mergeKey: 'type' }),
      addresses: field(mapList(core('NodeAddress'), 'type'), 'The node\'s addresses.', { patch: 'merge', mergeKey: 'type' }),
      daemonEndpoints: field(core('NodeDaemonEndpoints'), 'The ports of the node\'s daemons.', { emitted: true }),
      nodeInfo: field(core('NodeSystemInfo'), 'Facts about the node\'s system.', { emitted: true }),
      images: field(atomicList(core('ContainerImage')), 'The images on the node.'),
      volumesInUse: field(atomicList(str), 'Volumes in use on the node.'),
      volumesAttached: field(atomicList(core('AttachedVolume')), 'Volumes attached to the node.'),
      config: field(core('NodeConfigStatus'), 'The state of the node\'s dynamic configuration.'),
      runtimeHandlers: field(atomicList(core('NodeRuntimeHandler')), 'The node\'s runtime handlers.'),
      features: field(core('NodeFeatures'), 'The features the node supports.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Node',
    'A worker that runs pods.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      spec: field(core('NodeSpec'), 'The desired state of the node.', { emitted: true }),
      status: field(core('NodeStatus'), 'The observed state of the node.', { emitted: true }),
    },
    { gvk: [{ group: '', version: 'v1', kind: 'Node' }] },
  ),
  struct(
    'io.k8s.api.core.v1.ObjectReference',
    'A reference to an object, or to a field of it.',
    {
      kind: field(str, 'The object\'s kind.'),
      namespace: field(str, 'The object\'s namespace.'),
      name: field(str, 'The object\'s name.'),
      uid: field(str, 'The object\'s UID.'),
      apiVersion: field(str, 'The object\'s API version.'),
      resourceVersion: field(str, 'The object\'s resource version.'),
      fieldPath: field(str, 'A field of the object, such as spec.containers{name}, when the reference is to part of it.'),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.api.core.v1.EventSource',
    'The component that reported an event.',
    {
      component: field(str, 'The component.'),
      host: field(str, 'The node it runs on.'),
    },
  ),
  struct(
    'io.k8s.api.core.v1.EventSeries',
    'A series of repeated events.',
    {
      count: field(int32, 'How many times it occurred.'),
      lastObservedTime: field(MICRO_TIME, 'When it was last observed.', { emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.core.v1.Event',
    'A report of something that happened to an object.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { required: true, emitted: true }),
      involvedObject: field(core('ObjectReference'), 'The object the event is about.', { required: true, emitted: true }),
      reason: field(str, 'A short, CamelCase reason, machine-readable.'),
      message: field(str, 'A human-readable description.'),
      source: field(core('EventSource'), 'The component that reported it.', { emitted: true }),
      firstTimestamp: field(TIME, 'When the event was first recorded.', { emitted: true }),
      lastTimestamp: field(TIME, 'When the event was last recorded.', { emitted: true }),
      count: field(int32, 'How many times it occurred.'),
      type: field(str, 'Normal or Warning.'),
      eventTime: field(MICRO_TIME, 'When the event first happened, with microseconds.', { emitted: true }),
      series: field(core('EventSeries'), 'Data about a series of repeated events.'),
      action: field(str, 'What was done, or failed.'),
      related: field(core('ObjectReference'), 'A second object involved.'),
      reportingComponent: field(str, 'The controller that emitted the event.', { emitted: true }),
      reportingInstance: field(str, 'The instance of that controller.', { emitted: true }),
    },
    { gvk: [{ group: '', version: 'v1', kind: 'Event' }] },
  ),
  struct(
    'io.k8s.api.core.v1.ConfigMap',
    'Configuration data for pods, as keys and values.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      immutable: field(bool, 'When true, data and binaryData cannot change.'),
      data: field(granularMap(str), 'UTF-8 values by key.'),
      binaryData: field(granularMap(bytes), 'Binary values by key, base64 encoded.'),
    },
    { gvk: [{ group: '', version: 'v1', kind: 'ConfigMap' }] },
  ),
  struct(
    'io.k8s.api.core.v1.Secret',
    'Sensitive data, such as passwords and keys, by key.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      immutable: field(bool, 'When true, data cannot change.'),
      data: field(granularMap(bytes), 'Values by key, base64 encoded.'),
      stringData: field(granularMap(str), 'Plain string values by key, merged into data on write; never returned.'),
      type: field(str, 'The kind of secret, which sets the keys it must have.'),
    },
    { gvk: [{ group: '', version: 'v1', kind: 'Secret' }] },
  ),
  struct(
    'io.k8s.api.core.v1.ServiceAccount',
    'An identity for processes that run in pods.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      secrets: field(mapList(core('ObjectReference'), 'name'), 'Deprecated: Secrets holding legacy tokens of the account.', { patch: 'merge', mergeKey: 'name' }),
      imagePullSecrets: field(atomicList(core('LocalObjectReference')), 'Secrets for pulling images, added to pods that use this account.'),
      automountServiceAccountToken: field(bool, 'Whether pods mount the account\'s token by default.'),
    },
    { gvk: [{ group: '', version: 'v1', kind: 'ServiceAccount' }] },
  ),
  struct(
    'io.k8s.api.core.v1.Binding',
    'Binds a pod to a node; posted by the scheduler.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      target: field(core('ObjectReference'), 'The node to bind to.', { required: true, emitted: true }),
    },
    { gvk: [{ group: '', version: 'v1', kind: 'Binding' }] },
  ),
);
