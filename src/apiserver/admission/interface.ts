// The seam between the registry and admission: the registry calls an AdmissionChain at the two points
// Kubernetes does (after defaulting, before validation: admit; after validation, before the write:
// validate), and collects what each plugin did as AdmissionRecords, which it stores with the object's
// history for `setpoint why`. The admission folder owns the chain (plugins and webhooks); this file is the
// contract both sides build on.
import type { UserInfo } from '../authn/user-info.js';
import type { StoredObject } from '../storage/interface.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export interface AdmissionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly resource: AdmissionResource;
  /** '' for the main resource, else `status`, `binding`, `scale`, `eviction`, `finalize`. */
  readonly subresource: string;
  /** The kind of `object` (for pods/binding a Binding, for deployments/scale an autoscaling/v1 Scale). */
  readonly kind: AdmissionKind;
  /** '' for cluster-scoped resources. */
  readonly namespace: string;
  /** The object's name; on a CREATE with generateName, '' until the registry has made one up. */
  readonly name: string;
  /** The object as it will be written (CREATE, UPDATE); for DELETE absent. Plugins must not change it in place. */
  readonly object?: StoredObject;
  /** The stored object before the write (UPDATE, DELETE). */
  readonly oldObject?: StoredObject;
  readonly dryRun: boolean;
  readonly user: UserInfo;
  /** The request's CreateOptions / UpdateOptions / DeleteOptions as the client sent them. */
  readonly options?: unknown;
  /** Aborted when the request is no longer wanted: webhooks stop waiting. */
  readonly signal: AbortSignal;
  /** The kind's defaults, applied in place: Kubernetes defaults an object again after a webhook patched it. */
  readonly defaults?: (obj: StoredObject) => void;
  /** Sends a warning to the client (a `Warning: 299 - "…"` header), as webhooks' `warnings` are sent. */
  readonly warn?: (text: string) => void;
}

/** What one step did to one request: the facts `setpoint why` reports. */
export interface AdmissionRecord {
  readonly stage: 'defaulting' | 'mutating' | 'validating';
  /** The plugin or webhook name (`defaults` for the registry's defaulting). */
  readonly plugin: string;
  readonly allowed: boolean;
  readonly message?: string;
  /** JSON-pointer-ish dotted paths the step changed (`spec.restartPolicy`), empty when it changed nothing. */
  readonly changedPaths: readonly string[];
  readonly latencyMs: number;
}

export interface AdmissionChain {
  /** Mutating plugins then mutating webhooks; returns the (possibly changed) object. Throws StatusError to refuse. */
  admit(attrs: AdmissionAttributes, records: AdmissionRecord[]): Promise<StoredObject | undefined>;
  /** Validating plugins then validating webhooks. Throws StatusError to refuse. */
  validate(attrs: AdmissionAttributes, records: AdmissionRecord[]): Promise<void>;
}

/** The chain with no plugins: admits everything unchanged. Used until a real chain is configured. */
export const NOOP_ADMISSION: AdmissionChain = {
  admit: (attrs) => Promise.resolve(attrs.object),
  validate: () => Promise.resolve(),
};
