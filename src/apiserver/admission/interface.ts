// The seam between the generic registry and the admission chain (issue 26). Names are shared with the registry
// helper's copy; keep them identical.
import type { UserInfo } from '../authn/user-info.js';
import type { StoredObject } from '../storage/interface.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly resource: { readonly group: string; readonly version: string; readonly resource: string };
  readonly subresource: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly namespace: string;
  readonly name: string;
  readonly object?: StoredObject;
  readonly oldObject?: StoredObject;
  readonly dryRun: boolean;
  readonly user: UserInfo;
  readonly options?: unknown;
  readonly signal: AbortSignal;
}

/** One step of the chain, kept for `setpoint why`. */
export interface AdmissionRecord {
  readonly stage: 'defaulting' | 'mutating' | 'validating';
  readonly plugin: string;
  readonly allowed: boolean;
  readonly message?: string;
  readonly changedPaths: readonly string[];
  readonly latencyMs: number;
}

export interface AdmissionChain {
  admit(attrs: AdmissionAttributes, records: AdmissionRecord[]): Promise<StoredObject | undefined>;
  validate(attrs: AdmissionAttributes, records: AdmissionRecord[]): Promise<void>;
}
