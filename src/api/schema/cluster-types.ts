// The smaller groups: autoscaling/v1 Scale, coordination.k8s.io/v1 Lease, events.k8s.io/v1 Event and
// scheduling.k8s.io/v1 PriorityClass.
// Field names, types, list types, merge keys and defaults are Kubernetes' (k8s.io/api v0.32); the
// descriptions are short summaries of our own.

import { bool, enumOf, field, int32, str, struct, typeTable } from './schema.js';
import type { TypeTable } from './schema.js';
import { typeMetaFields, autoscaling, coordination, core, events, meta, MICRO_TIME, TIME } from './type-refs.js';

export const clusterTypes: TypeTable = typeTable(
  struct(
    'io.k8s.api.autoscaling.v1.ScaleSpec',
    'The desired scale.',
    {
      replicas: field(int32, 'The number of replicas wanted.'),
    },
  ),
  struct(
    'io.k8s.api.autoscaling.v1.ScaleStatus',
    'The observed scale.',
    {
      replicas: field(int32, 'The actual number of replicas.', { required: true, emitted: true }),
      selector: field(str, 'The label selector of the pods, as a string.'),
    },
  ),
  struct(
    'io.k8s.api.autoscaling.v1.Scale',
    'The scale of a resource, read and written through its scale subresource.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      spec: field(autoscaling('ScaleSpec'), 'The desired scale.', { emitted: true }),
      status: field(autoscaling('ScaleStatus'), 'The observed scale.', { emitted: true }),
    },
    { gvk: [{ group: 'autoscaling', version: 'v1', kind: 'Scale' }] },
  ),
  struct(
    'io.k8s.api.coordination.v1.LeaseSpec',
    'The state of a lease.',
    {
      holderIdentity: field(str, 'Who holds the lease.'),
      leaseDurationSeconds: field(int32, 'How long a holder may go without renewing before others may take the lease.'),
      acquireTime: field(MICRO_TIME, 'When the current holder acquired the lease.'),
      renewTime: field(MICRO_TIME, 'When the current holder last renewed the lease.'),
      leaseTransitions: field(int32, 'How many times the lease changed holders.'),
      strategy: field(str, 'The strategy for picking a leader in coordinated election.'),
      preferredHolder: field(str, 'The holder a coordinated election prefers.'),
    },
  ),
  struct(
    'io.k8s.api.coordination.v1.Lease',
    'A lease, used for leader election and node heartbeats.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      spec: field(coordination('LeaseSpec'), 'The state of the lease.', { emitted: true }),
    },
    { gvk: [{ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' }] },
  ),
  struct(
    'io.k8s.api.events.v1.EventSeries',
    'A series of repeated events.',
    {
      count: field(int32, 'How many times it occurred in the last heartbeat.', { required: true, emitted: true }),
      lastObservedTime: field(MICRO_TIME, 'When it was last observed.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.events.v1.Event',
    'A report of something that happened to an object (events.k8s.io).',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      eventTime: field(MICRO_TIME, 'When the event first happened. Required.', { required: true, emitted: true }),
      series: field(events('EventSeries'), 'Data about a series of repeated events.'),
      reportingController: field(str, 'The controller that emitted the event, such as kubernetes.io/kubelet.'),
      reportingInstance: field(str, 'The instance of that controller.'),
      action: field(str, 'What was done, or failed.'),
      reason: field(str, 'Why the action was taken, CamelCase.'),
      regarding: field(core('ObjectReference'), 'The object the event is about.', { emitted: true }),
      related: field(core('ObjectReference'), 'A second object involved.'),
      note: field(str, 'A human-readable description.'),
      type: field(str, 'Normal or Warning.'),
      deprecatedSource: field(core('EventSource'), 'The core/v1 source field.', { emitted: true }),
      deprecatedFirstTimestamp: field(TIME, 'The core/v1 firstTimestamp field.', { emitted: true }),
      deprecatedLastTimestamp: field(TIME, 'The core/v1 lastTimestamp field.', { emitted: true }),
      deprecatedCount: field(int32, 'The core/v1 count field.'),
    },
    { gvk: [{ group: 'events.k8s.io', version: 'v1', kind: 'Event' }] },
  ),
  struct(
    'io.k8s.api.scheduling.v1.PriorityClass',
    'A name for a pod priority value.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      value: field(int32, 'The priority of pods of this class; higher runs first.', { required: true, emitted: true }),
      globalDefault: field(bool, 'Whether pods without a class get this one; only one class may say so.'),
      description: field(str, 'When to use this class.'),
      preemptionPolicy: field(enumOf('Never', 'PreemptLowerPriority'), 'PreemptLowerPriority or Never. Defaults to PreemptLowerPriority.'),
    },
    { gvk: [{ group: 'scheduling.k8s.io', version: 'v1', kind: 'PriorityClass' }] },
  ),
);
