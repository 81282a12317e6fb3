// etcd's errors, with the exact messages clients match on and the gRPC status each maps to at the edge.
// The store throws EtcdError; the server turns `grpcCode` and `message` into a gRPC status unchanged.

/** gRPC status codes (numbers from the gRPC spec), kept here so the store does not import gRPC. */
export const GrpcCode = {
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  RESOURCE_EXHAUSTED: 8,
  OUT_OF_RANGE: 11,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
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
  // Server and cluster errors (v3rpc/rpctypes).
  NO_LEADER: [GrpcCode.UNAVAILABLE, 'etcdserver: no leader'],
  NOT_LEADER: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: not leader'],
  LEADER_CHANGED: [GrpcCode.UNAVAILABLE, 'etcdserver: leader changed'],
  NOT_CAPABLE: [GrpcCode.UNAVAILABLE, 'etcdserver: not capable'],
  STOPPED: [GrpcCode.UNAVAILABLE, 'etcdserver: server stopped'],
  TIMEOUT: [GrpcCode.UNAVAILABLE, 'etcdserver: request timed out'],
  TIMEOUT_DUE_TO_LEADER_FAIL: [GrpcCode.UNAVAILABLE, 'etcdserver: request timed out, possibly due to previous leader failure'],
  TIMEOUT_DUE_TO_CONNECTION_LOST: [GrpcCode.UNAVAILABLE, 'etcdserver: request timed out, possibly due to connection lost'],
  UNHEALTHY: [GrpcCode.UNAVAILABLE, 'etcdserver: unhealthy cluster'],
  TOO_MANY_REQUESTS: [GrpcCode.RESOURCE_EXHAUSTED, 'etcdserver: too many requests'],
  NOT_SUPPORTED_FOR_LEARNER: [GrpcCode.UNAVAILABLE, 'etcdserver: rpc not supported for learner'],
  MEMBER_NOT_FOUND: [GrpcCode.NOT_FOUND, 'etcdserver: member not found'],
  MEMBER_EXIST: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: member ID already exist'],
  PEER_URL_EXIST: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: Peer URLs already exists'],
  // Unknown, not FailedPrecondition: etcd 3.4's server maps this error to the client-side error value
  // rather than to a gRPC status, so gRPC sends it as Unknown (etcdctl prints "code = Unknown").
  MEMBER_NOT_ENOUGH_STARTED: [GrpcCode.UNKNOWN, 'etcdserver: re-configuration failed due to not enough started members'],
  MEMBER_BAD_URLS: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: given member URLs are invalid'],
  MEMBER_NOT_LEARNER: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: can only promote a learner member'],
  LEARNER_NOT_READY: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: can only promote a learner member which is in sync with leader'],
  TOO_MANY_LEARNERS: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: too many learner members in cluster'],
  BAD_LEADER_TRANSFEREE: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: bad leader transferee'],
  // Auth errors (v3rpc/rpctypes), with etcd 3.4's codes.
  ROOT_USER_NOT_EXIST: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: root user does not exist'],
  ROOT_ROLE_NOT_EXIST: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: root user does not have root role'],
  USER_ALREADY_EXIST: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: user name already exists'],
  USER_EMPTY: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: user name is empty'],
  USER_NOT_FOUND: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: user name not found'],
  ROLE_ALREADY_EXIST: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: role name already exists'],
  ROLE_NOT_FOUND: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: role name not found'],
  ROLE_EMPTY: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: role name is empty'],
  AUTH_FAILED: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: authentication failed, invalid user ID or password'],
  PERMISSION_DENIED: [GrpcCode.PERMISSION_DENIED, 'etcdserver: permission denied'],
  ROLE_NOT_GRANTED: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: role is not granted to the user'],
  PERMISSION_NOT_GRANTED: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: permission is not granted to the role'],
  AUTH_NOT_ENABLED: [GrpcCode.FAILED_PRECONDITION, 'etcdserver: authentication is not enabled'],
  // Mapped to its status since etcd 3.4.19 (before, gRPC sent the auth package's "auth: revision in header
  // is old" as Unknown); etcd's clients from 3.4.19 on authenticate again and retry on it.
  AUTH_OLD_REVISION: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: revision of auth store is old'],
  INVALID_AUTH_TOKEN: [GrpcCode.UNAUTHENTICATED, 'etcdserver: invalid auth token'],
  INVALID_AUTH_MGMT: [GrpcCode.INVALID_ARGUMENT, 'etcdserver: invalid auth management'],
  // The auth package's own errors, which etcd 3.4's Maintenance checks return untranslated (so Unknown).
  AUTH_RAW_PERMISSION_DENIED: [GrpcCode.UNKNOWN, 'auth: permission denied'],
  AUTH_RAW_USER_EMPTY: [GrpcCode.UNKNOWN, 'auth: user name is empty'],
  AUTH_RAW_USER_NOT_FOUND: [GrpcCode.UNKNOWN, 'auth: user not found'],
  AUTH_RAW_INVALID_TOKEN: [GrpcCode.UNKNOWN, 'auth: invalid auth token'],
  // Authenticate as a user made with --no-password: CheckPassword's own error, also untranslated.
  AUTH_RAW_NO_PASSWORD_USER: [GrpcCode.UNKNOWN, 'auth: authentication failed, password was given for no password user'],
  // Authenticate with a JWT public key only (etcd maps no status to it).
  AUTH_RAW_VERIFY_ONLY: [GrpcCode.UNKNOWN, 'auth: token signing attempted with verify-only key'],
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
export type KvStoreErrorCode = 'KV_FOREIGN_DIR' | 'KV_CORRUPT' | 'KV_VERSION' | 'KV_CLOSED' | 'KV_INTERNAL';

export class KvStoreError extends Error {
  readonly code: KvStoreErrorCode;
  constructor(code: KvStoreErrorCode, message: string) {
    super(message);
    this.name = 'KvStoreError';
    this.code = code;
  }
}
