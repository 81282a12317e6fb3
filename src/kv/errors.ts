// etcd's errors, with the exact messages clients match on and the gRPC status each maps to at the edge.
// The store throws EtcdError; the server turns `grpcCode` and `message` into a gRPC status unchanged.

/** gRPC status codes (numbers from the gRPC spec), kept here so the store does not import gRPC. */
export const GrpcCode = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  FAILED_PRECONDITION: 9,
  RESOURCE_EXHAUSTED: 8,
  OUT_OF_RANGE: 11,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
} as const;

const errors = {
  EMPTY_KEY: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: key is not provided'],
  KEY_NOT_FOUND: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: key not found'],
  VALUE_PROVIDED: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: value is provided'],
  LEASE_PROVIDED: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: lease is provided'],
  TOO_MANY_OPS: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: too many operations in txn request'],
  DUPLICATE_KEY: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: duplicate key given in txn request'],
  REQUEST_TOO_LARGE: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: request is too large'],
  COMPACTED: [GrpcCode.OUT_OF_RANGE, 'etcdserver: mvcc: required revision has been compacted'],
  FUTURE_REV: [GrpcCode.OUT_OF_RANGE, 'etcdserver: mvcc: required revision is a future revision'],
  NO_SPACE: [GrpcCode.RESOURCE_EXHAUSTED, 'etcdserver: mvcc: database space exceeded'],
  LEASE_NOT_FOUND: [GrpcCode.NOT_FOUND, 'etcdserver: requested lease not found'],
  LEASE_EXIST: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: lease already exists'],
  LEASE_TTL_TOO_LARGE: [GrpcCode.OUT_OF_RANGE, 'etcdserver: too large lease TTL'],
  CORRUPT: [GrpcCode.DATA_LOSS, 'etcdserver: corrupt cluster'],
} as const;

export type EtcdErrorCode = keyof typeof errors;

export class EtcdError extends Error {
  readonly code: EtcdErrorCode;
  readonly grpcCode: number;

  constructor(code: EtcdErrorCode) {
    const [grpcCode, message] = errors[code];
    super(message);
    this.name = 'EtcdError';
    this.code = code;
    this.grpcCode = grpcCode;
  }
}

export function etcdError(code: EtcdErrorCode): EtcdError {
  return new EtcdError(code);
}

/** Errors about the store's data directory (not etcd wire errors). */
export type KvStoreErrorCode = 'KV_FOREIGN_DIR' | 'KV_CORRUPT' | 'KV_VERSION' | 'KV_CLOSED';

export class KvStoreError extends Error {
  readonly code: KvStoreErrorCode;
  constructor(code: KvStoreErrorCode, message: string) {
    super(message);
    this.name = 'KvStoreError';
    this.code = code;
  }
}
