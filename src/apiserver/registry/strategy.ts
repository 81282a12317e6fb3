// What makes one kind different from another, and nothing else: Kubernetes' RESTCreateStrategy,
// RESTUpdateStrategy and RESTDeleteStrategy folded into one record per kind. The generic store does every
// verb for every kind through this; a kind is a strategy file and its table columns.
import type { FieldError } from '../../api/field-errors.js';
import type { NameValidator } from '../../api/name-validation.js';
import type { ResourceDescriptor } from '../resource-registry.js';
import type { StoredObject } from '../storage/interface.js';
import type { TableColumn } from './table.js';

/** A decoded object the strategy may change in place (the store hands it a private copy). */
export type MutableObject = StoredObject;

export interface Strategy {
  readonly descriptor: ResourceDescriptor;
  /** The resource's segment in the store's keys, when it differs from the URL's (events.k8s.io events live under `events`). */
  readonly storageResource?: string;
  /** The kind's name rule (most kinds: DNS subdomain; namespaces: DNS label). */
  readonly nameRule: NameValidator;
  /** True when status is written only through /status (the main resource keeps the stored status). */
  readonly hasStatus: boolean;
  /** True when metadata.generation is kept and bumped on changes outside metadata and status. */
  readonly hasGeneration: boolean;
  /** PUT of a missing object creates it (Leases, Events, ConfigMaps … in Kubernetes: AllowCreateOnUpdate). */
  readonly allowCreateOnUpdate: boolean;
  /** DELETE answers the deleted object (true) or a Success Status (false), as each kind does in Kubernetes. */
  readonly returnDeletedObject: boolean;
  /** Store under a lease of --event-ttl. */
  readonly ttl?: boolean;
  /** Kubernetes' defaults, applied in place. */
  defaults?(obj: MutableObject): void;
  /** Before a create: clear what a client may not set (status of kinds with /status), set what the server owns. */
  prepareForCreate?(obj: MutableObject): void;
  /** Before an update through the main resource (status copied back already when hasStatus). */
  prepareForUpdate?(obj: MutableObject, old: StoredObject, subresource: string): void;
  validate(obj: StoredObject): FieldError[];
  validateUpdate(obj: StoredObject, old: StoredObject): FieldError[];
  /** Fields a fieldSelector may name beyond metadata.name and metadata.namespace. */
  selectableFields?(obj: StoredObject): Record<string, string>;
  /**
   * A delete that does not remove the object yet: returns the object to store instead (a pod on a node gets
   * deletionTimestamp and waits for its agent; a namespace turns Terminating). Undefined: delete as usual.
   */
  gracefulDelete?(obj: StoredObject, gracePeriodSeconds: number | undefined, now: string): MutableObject | undefined;
  /**
   * An object being deleted whose metadata.finalizers are all gone is removed by the update that cleared
   * them, unless the kind holds it for another reason (a namespace until spec.finalizers is empty, as
   * Kubernetes' ShouldDeleteNamespaceDuringUpdate).
   */
  holdsDeletion?(obj: StoredObject): boolean;
  readonly columns?: readonly TableColumn[];
  /**
   * When the kind is stored in another version's shape (events.k8s.io/v1 Events are stored as core/v1
   * Events, as Kubernetes stores them): the conversions both ways. Everything else sees the API shape.
   */
  readonly convert?: { toStored(obj: StoredObject): StoredObject; fromStored(obj: StoredObject): StoredObject };
}

export function deepCopy<T>(v: T): T {
  return structuredClone(v);
}
