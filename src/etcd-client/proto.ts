// The client's view of the etcd v3 wire contract: proto/etcd loaded into grpc-js service constructors, and
// the decoded shapes of the messages this client reads. Decoding keeps proto3 defaults, 64-bit integers as
// decimal strings (lease ids do not fit a double), enums as names and oneofs named by a virtual field.
import * as grpc from '@grpc/grpc-js';
import { etcdPackageDefinition } from '../etcd-proto/package-definition.js';

export type ServiceName = 'KV' | 'Watch' | 'Lease' | 'Maintenance';

export interface WireHeader {
  readonly clusterId: string;
  readonly memberId: string;
  readonly revision: string;
  readonly raftTerm: string;
}

export interface WireKeyValue {
  readonly key: Buffer;
  readonly createRevision: string;
  readonly modRevision: string;
  readonly version: string;
  readonly value: Buffer;
  readonly lease: string;
}

export interface WireRangeResponse {
  readonly header: WireHeader | null;
  readonly kvs: WireKeyValue[];
  readonly more: boolean;
  readonly count: string;
}

export interface WirePutResponse {
  readonly header: WireHeader | null;
  readonly prevKv: WireKeyValue | null;
}

export interface WireDeleteRangeResponse {
  readonly header: WireHeader | null;
  readonly deleted: string;
  readonly prevKvs: WireKeyValue[];
}

export interface WireResponseOp {
  readonly response?: 'responseRange' | 'responsePut' | 'responseDeleteRange' | 'responseTxn';
  readonly responseRange?: WireRangeResponse;
  readonly responsePut?: WirePutResponse;
  readonly responseDeleteRange?: WireDeleteRangeResponse;
}

export interface WireTxnResponse {
  readonly header: WireHeader | null;
  readonly succeeded: boolean;
  readonly responses: WireResponseOp[];
}

export interface WireEvent {
  readonly type: 'PUT' | 'DELETE';
  readonly kv: WireKeyValue | null;
  readonly prevKv: WireKeyValue | null;
}

export interface WireWatchResponse {
  readonly header: WireHeader | null;
  readonly watchId: string;
  readonly created: boolean;
  readonly canceled: boolean;
  readonly compactRevision: string;
  readonly cancelReason: string;
  readonly fragment: boolean;
  readonly events: WireEvent[];
}

export interface WireLeaseGrantResponse {
  readonly header: WireHeader | null;
  readonly ID: string;
  readonly TTL: string;
  readonly error: string;
}

export interface WireStatusResponse {
  readonly header: WireHeader | null;
  readonly version: string;
  readonly dbSize: string;
  readonly leader: string;
  readonly raftIndex: string;
  readonly raftTerm: string;
  readonly raftAppliedIndex: string;
  readonly errors: string[];
  readonly dbSizeInUse: string;
  readonly isLearner: boolean;
}

type Constructors = Record<ServiceName, grpc.ServiceClientConstructor>;

let constructors: Constructors | undefined;

/** proto/etcd of this checkout, the first one found going up from this module (src/ or dist/src/). */
export function serviceConstructors(): Constructors {
  if (constructors) return constructors;
  const def = etcdPackageDefinition();
  const pkg = grpc.loadPackageDefinition(def)['etcdserverpb'] as unknown as Constructors;
  constructors = { KV: pkg.KV, Watch: pkg.Watch, Lease: pkg.Lease, Maintenance: pkg.Maintenance };
  return constructors;
}
