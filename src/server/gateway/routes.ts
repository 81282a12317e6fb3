// The JSON gateway's routes as etcd 3.4 registers them (its rpc.proto's google.api.http options): each a
// POST path under /v3/ (also served under /v3beta/ in 3.4), the gRPC method behind it and its messages.
import type { EtcdServiceName } from '../v3rpc/etcd-proto.js';

export interface GatewayRoute {
  readonly service: EtcdServiceName;
  readonly method: string;
  /** Message names in etcdserverpb. */
  readonly request: string;
  readonly response: string;
  /**
   * 'bidi': newline-delimited JSON requests in the body, `{"result":…}` objects out; 'server': one request,
   * `{"result":…}` objects out.
   */
  readonly stream?: 'bidi' | 'server';
}

const r = (service: EtcdServiceName, method: string, request: string, response: string, stream?: 'bidi' | 'server'): GatewayRoute => ({
  service,
  method,
  request,
  response,
  ...(stream ? { stream } : {}),
});

const auth = (method: string, msg: string): GatewayRoute => r('Auth', method, `Auth${msg}Request`, `Auth${msg}Response`);

/** Path (after the version prefix) → route. */
export const GATEWAY_ROUTES: ReadonlyMap<string, GatewayRoute> = new Map([
  ['/kv/range', r('KV', 'Range', 'RangeRequest', 'RangeResponse')],
  ['/kv/put', r('KV', 'Put', 'PutRequest', 'PutResponse')],
  ['/kv/deleterange', r('KV', 'DeleteRange', 'DeleteRangeRequest', 'DeleteRangeResponse')],
  ['/kv/txn', r('KV', 'Txn', 'TxnRequest', 'TxnResponse')],
  ['/kv/compaction', r('KV', 'Compact', 'CompactionRequest', 'CompactionResponse')],
  ['/watch', r('Watch', 'Watch', 'WatchRequest', 'WatchResponse', 'bidi')],
  ['/lease/grant', r('Lease', 'LeaseGrant', 'LeaseGrantRequest', 'LeaseGrantResponse')],
  ['/lease/revoke', r('Lease', 'LeaseRevoke', 'LeaseRevokeRequest', 'LeaseRevokeResponse')],
  ['/kv/lease/revoke', r('Lease', 'LeaseRevoke', 'LeaseRevokeRequest', 'LeaseRevokeResponse')],
  ['/lease/keepalive', r('Lease', 'LeaseKeepAlive', 'LeaseKeepAliveRequest', 'LeaseKeepAliveResponse', 'bidi')],
  ['/lease/timetolive', r('Lease', 'LeaseTimeToLive', 'LeaseTimeToLiveRequest', 'LeaseTimeToLiveResponse')],
  ['/kv/lease/timetolive', r('Lease', 'LeaseTimeToLive', 'LeaseTimeToLiveRequest', 'LeaseTimeToLiveResponse')],
  ['/lease/leases', r('Lease', 'LeaseLeases', 'LeaseLeasesRequest', 'LeaseLeasesResponse')],
  ['/kv/lease/leases', r('Lease', 'LeaseLeases', 'LeaseLeasesRequest', 'LeaseLeasesResponse')],
  ['/cluster/member/add', r('Cluster', 'MemberAdd', 'MemberAddRequest', 'MemberAddResponse')],
  ['/cluster/member/remove', r('Cluster', 'MemberRemove', 'MemberRemoveRequest', 'MemberRemoveResponse')],
  ['/cluster/member/update', r('Cluster', 'MemberUpdate', 'MemberUpdateRequest', 'MemberUpdateResponse')],
  ['/cluster/member/list', r('Cluster', 'MemberList', 'MemberListRequest', 'MemberListResponse')],
  ['/cluster/member/promote', r('Cluster', 'MemberPromote', 'MemberPromoteRequest', 'MemberPromoteResponse')],
  ['/maintenance/alarm', r('Maintenance', 'Alarm', 'AlarmRequest', 'AlarmResponse')],
  ['/maintenance/status', r('Maintenance', 'Status', 'StatusRequest', 'StatusResponse')],
  ['/maintenance/defragment', r('Maintenance', 'Defragment', 'DefragmentRequest', 'DefragmentResponse')],
  // HashKV's option names the same path as Hash; etcd 3.4's gateway answers it with Hash.
  ['/maintenance/hash', r('Maintenance', 'Hash', 'HashRequest', 'HashResponse')],
  ['/maintenance/snapshot', r('Maintenance', 'Snapshot', 'SnapshotRequest', 'SnapshotResponse', 'server')],
  ['/maintenance/transfer-leadership', r('Maintenance', 'MoveLeader', 'MoveLeaderRequest', 'MoveLeaderResponse')],
  ['/auth/enable', auth('AuthEnable', 'Enable')],
  ['/auth/disable', auth('AuthDisable', 'Disable')],
  ['/auth/authenticate', r('Auth', 'Authenticate', 'AuthenticateRequest', 'AuthenticateResponse')],
  ['/auth/user/add', auth('UserAdd', 'UserAdd')],
  ['/auth/user/get', auth('UserGet', 'UserGet')],
  ['/auth/user/list', auth('UserList', 'UserList')],
  ['/auth/user/delete', auth('UserDelete', 'UserDelete')],
  ['/auth/user/changepw', auth('UserChangePassword', 'UserChangePassword')],
  ['/auth/user/grant', auth('UserGrantRole', 'UserGrantRole')],
  ['/auth/user/revoke', auth('UserRevokeRole', 'UserRevokeRole')],
  ['/auth/role/add', auth('RoleAdd', 'RoleAdd')],
  ['/auth/role/get', auth('RoleGet', 'RoleGet')],
  ['/auth/role/list', auth('RoleList', 'RoleList')],
  ['/auth/role/delete', auth('RoleDelete', 'RoleDelete')],
  ['/auth/role/grant', auth('RoleGrantPermission', 'RoleGrantPermission')],
  ['/auth/role/revoke', auth('RoleRevokePermission', 'RoleRevokePermission')],
]);

/** The version prefixes etcd 3.4 serves the gateway under (/v3alpha is gone in 3.4: 404 page not found). */
export const GATEWAY_PREFIXES = ['/v3', '/v3beta'] as const;
