// meta.k8s.io/v1 and its helpers: ObjectMeta, owner references, managed fields, label selectors, list
// metadata, Status, DeleteOptions, Table and WatchEvent; and the named scalar types every group uses
// (Quantity, IntOrString, Time, MicroTime, RawExtension, FieldsV1).
// Field names, types, list types, merge keys and defaults are Kubernetes' (k8s.io/api v0.32); the
// descriptions are short summaries of our own.

import { anyJSON, atomicList, bool, field, granularMap, int32, int64, mapList, named, setList, str, struct, typeTable } from './schema.js';
import type { TypeTable } from './schema.js';
import { typeMetaFields, meta, FIELDS_V1, RAW_EXTENSION, TIME } from './type-refs.js';

export const metaV1Types: TypeTable = typeTable(
  named('io.k8s.apimachinery.pkg.api.resource.Quantity', 'A fixed-point number with a suffix, such as 500m, 1.5Gi or 2e3.', { kind: 'quantity' }),
  named('io.k8s.apimachinery.pkg.util.intstr.IntOrString', 'A value that is either an integer or a string, such as a port number or a percentage.', { kind: 'int-or-string' }),
  named('io.k8s.apimachinery.pkg.apis.meta.v1.Time', 'A timestamp serialized as RFC 3339 in UTC, with second precision.', { kind: 'time', precision: 'second' }),
  named('io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime', 'A timestamp serialized as RFC 3339 in UTC, with microsecond precision.', { kind: 'time', precision: 'micro' }),
  named('io.k8s.apimachinery.pkg.runtime.RawExtension', 'An embedded object of any kind.', anyJSON),
  named('io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1', 'A set of fields in the FieldsV1 format: a JSON object of "f:", "k:", "v:", "i:" and "." keys.', anyJSON),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference',
    'Points to an object that owns this one; owned objects are garbage-collected with their owner.',
    {
      apiVersion: field(str, 'API version of the owner.', { required: true, emitted: true }),
      kind: field(str, 'Kind of the owner.', { required: true, emitted: true }),
      name: field(str, 'Name of the owner.', { required: true, emitted: true }),
      uid: field(str, 'UID of the owner.', { required: true, emitted: true }),
      controller: field(bool, 'True when the owner is the managing controller; at most one reference may say so.'),
      blockOwnerDeletion: field(bool, 'When true, foreground deletion of the owner waits until this object is removed.'),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry',
    'One manager\'s record of the fields it owns, kept for server-side apply.',
    {
      manager: field(str, 'The identity of the workflow that manages these fields.'),
      operation: field(str, 'The operation that made this entry: Apply or Update.'),
      apiVersion: field(str, 'The API version the fields are expressed in.'),
      time: field(TIME, 'When the fields were last changed by this manager (not updated by no-op writes).'),
      fieldsType: field(str, 'The format of the fields; only FieldsV1 exists.'),
      fieldsV1: field(FIELDS_V1, 'The managed fields, in FieldsV1 format.'),
      subresource: field(str, 'The subresource the operation went through (empty for the main resource).'),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    'Metadata every persisted object has: its name, namespace, labels, owners and bookkeeping.',
    {
      name: field(str, 'Unique within a namespace; required on create unless generateName is set. Cannot be updated.'),
      generateName: field(str, 'A prefix from which the server makes a unique name when name is empty.'),
      namespace: field(str, 'The namespace the object lives in; empty for cluster-scoped kinds. Cannot be updated.'),
      selfLink: field(str, 'Deprecated and no longer set by the server.'),
      uid: field(str, 'A unique identifier the server assigns on create. Read-only.'),
      resourceVersion: field(str, 'An opaque version that changes on every write; used for optimistic concurrency and watches.'),
      generation: field(int64, 'A sequence number for changes to the desired state. Set by the server.'),
      creationTimestamp: field(TIME, 'When the object was created (UTC, RFC 3339). Set by the server.', { emitted: true }),
      deletionTimestamp: field(TIME, 'When the object will be or was asked to be deleted; set by the server on graceful deletion.'),
      deletionGracePeriodSeconds: field(int64, 'Seconds allowed for graceful termination before the object is removed.'),
      labels: field(granularMap(str), 'Keys and values to organize and select objects.'),
      annotations: field(granularMap(str), 'Arbitrary, non-identifying metadata for tools and people.'),
      ownerReferences: field(mapList(meta('OwnerReference'), 'uid'), 'The objects this one depends on; it is garbage-collected when all its owners are gone.', { patch: 'merge', mergeKey: 'uid' }),
      finalizers: field(setList(str), 'Keys that must be removed before the object is deleted; each names a controller\'s pending cleanup.', { patch: 'merge' }),
      managedFields: field(atomicList(meta('ManagedFieldsEntry')), 'Which manager owns which fields, for server-side apply. Maintained by the server.'),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement',
    'One requirement of a label selector: a key, an operator and values.',
    {
      key: field(str, 'The label key the requirement applies to.', { required: true, emitted: true }),
      operator: field(str, 'How the key relates to the values: In, NotIn, Exists or DoesNotExist.', { required: true, emitted: true }),
      values: field(atomicList(str), 'The values for In and NotIn (non-empty); empty for Exists and DoesNotExist.'),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector',
    'Selects objects by label; the conditions are ANDed, and an empty selector matches everything.',
    {
      matchLabels: field(granularMap(str), 'Exact key=value pairs the labels must contain.'),
      matchExpressions: field(atomicList(meta('LabelSelectorRequirement')), 'Requirements on label keys and values.'),
    },
    { atomic: true },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
    'Metadata of a list: its resource version and continue token.',
    {
      selfLink: field(str, 'Deprecated and no longer set by the server.'),
      resourceVersion: field(str, 'The version of the list, from which a watch can start.'),
      continue: field(str, 'Set when more items are available; pass it back to get the next chunk.'),
      remainingItemCount: field(int64, 'How many items follow this chunk, when the server can tell.'),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause',
    'One cause of a failure, usually a field and what is wrong with it.',
    {
      reason: field(str, 'A machine-readable description of the cause (for example FieldValueRequired).'),
      message: field(str, 'A human-readable description of the cause.'),
      field: field(str, 'The field that caused the error, as a path such as spec.containers[0].image.'),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails',
    'Extra data about a failure, such as the object concerned and per-field causes.',
    {
      name: field(str, 'The name of the object concerned, when there is one.'),
      group: field(str, 'The API group of the object concerned.'),
      kind: field(str, 'The kind of the object concerned.'),
      uid: field(str, 'The UID of the object concerned, when there is one.'),
      causes: field(atomicList(meta('StatusCause')), 'The individual causes of the failure.'),
      retryAfterSeconds: field(int32, 'How long to wait before retrying, when the server suggests it.'),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
    'The result of an operation that does not return an object, typically an error.',
    {
      ...typeMetaFields,
      metadata: field(meta('ListMeta'), 'Standard list metadata.', { emitted: true }),
      status: field(str, 'Success or Failure.'),
      message: field(str, 'A human-readable description of the status.'),
      reason: field(str, 'A machine-readable, CamelCase reason for a failure.'),
      details: field(meta('StatusDetails'), 'Extended data about the failure.'),
      code: field(int32, 'The suggested HTTP status code.'),
    },
    { gvk: [{ group: '', version: 'v1', kind: 'Status' }] },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions',
    'Conditions a delete must meet to go ahead.',
    {
      uid: field(str, 'The object must have this UID.'),
      resourceVersion: field(str, 'The object must be at this resource version.'),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
    'Options for a delete request.',
    {
      ...typeMetaFields,
      gracePeriodSeconds: field(int64, 'Seconds before the object is removed; zero deletes at once. Defaults to the kind\'s own value.'),
      preconditions: field(meta('Preconditions'), 'Conditions that must hold for the delete to happen.'),
      orphanDependents: field(bool, 'Deprecated: use propagationPolicy. Whether dependents are orphaned.'),
      propagationPolicy: field(str, 'How dependents are collected: Orphan, Background or Foreground.'),
      dryRun: field(atomicList(str), 'When set to All, the request is processed but nothing is stored.'),
      ignoreStoreReadErrorWithClusterBreakingPotential: field(bool, 'Deletes an object that cannot be read from storage. Dangerous.'),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.TableColumnDefinition',
    'Describes one column of a server-side table.',
    {
      name: field(str, 'The column\'s human-readable name.', { required: true, emitted: true }),
      type: field(str, 'The OpenAPI type of the column\'s cells.', { required: true, emitted: true }),
      format: field(str, 'An optional format for the cells, such as name.', { required: true, emitted: true }),
      description: field(str, 'What the column shows.', { required: true, emitted: true }),
      priority: field(int32, 'Importance of the column; columns above 0 are shown only in wide output.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.TableRowCondition',
    'A condition that applies to a table row.',
    {
      type: field(str, 'The kind of condition (for example Completed).', { required: true, emitted: true }),
      status: field(str, 'True, False or Unknown.', { required: true, emitted: true }),
      reason: field(str, 'A machine-readable reason for the condition.'),
      message: field(str, 'A human-readable explanation.'),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.TableRow',
    'One row of a table: its cells and, optionally, the object it shows.',
    {
      cells: field(atomicList(anyJSON), 'The cells, one per column definition.', { required: true, emitted: true }),
      conditions: field(atomicList(meta('TableRowCondition')), 'Conditions that apply to the row.'),
      object: field(RAW_EXTENSION, 'The object the row describes, in the form the request asked for.', { emitted: true }),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.Table',
    'A tabular view of a list of objects, as kubectl get prints it.',
    {
      ...typeMetaFields,
      metadata: field(meta('ListMeta'), 'Standard list metadata.', { emitted: true }),
      columnDefinitions: field(atomicList(meta('TableColumnDefinition')), 'The columns of the table.', { required: true, emitted: true }),
      rows: field(atomicList(meta('TableRow')), 'The rows of the table.', { required: true, emitted: true }),
    },
    { gvk: [{ group: 'meta.k8s.io', version: 'v1', kind: 'Table' }] },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent',
    'One event of a watch stream.',
    {
      type: field(str, 'ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.', { required: true, emitted: true }),
      object: field(RAW_EXTENSION, 'The object the event is about, or a Status for ERROR.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata',
    'An object\'s metadata alone.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
    },
    { gvk: [{ group: 'meta.k8s.io', version: 'v1', kind: 'PartialObjectMetadata' }] },
  ),
);
