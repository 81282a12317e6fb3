// etcdserverpb.Auth as an etcd member with authentication disabled and no users or roles answers it —
// which is what Setpoint's store is until it implements auth. That keeps clients working: clientv3 (and so
// etcdctl --user) treats "authentication is not enabled" from Authenticate as "go on without a token".
// Only creating users and roles, which would need the auth store, answers UNIMPLEMENTED.
import { status as Status } from '@grpc/grpc-js';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { EdgeContext } from './edge.js';
import { ETCD_PACKAGE, StatusError, unary } from './edge.js';
import { currentHeader } from './etcd-wire.js';

const SERVICE = `${ETCD_PACKAGE}.Auth`;

/** etcd's auth errors (v3rpc/rpctypes), with their exact messages. */
const AUTH_NOT_ENABLED = (): StatusError => new StatusError(Status.FAILED_PRECONDITION, 'etcdserver: authentication is not enabled');
const ROOT_USER_NOT_EXIST = (): StatusError => new StatusError(Status.FAILED_PRECONDITION, 'etcdserver: root user does not exist');
const USER_NOT_FOUND = (): StatusError => new StatusError(Status.FAILED_PRECONDITION, 'etcdserver: user name not found');
const ROLE_NOT_FOUND = (): StatusError => new StatusError(Status.FAILED_PRECONDITION, 'etcdserver: role name not found');
const USER_EMPTY = (): StatusError => new StatusError(Status.INVALID_ARGUMENT, 'etcdserver: user name is empty');
const ROLE_EMPTY = (): StatusError => new StatusError(Status.INVALID_ARGUMENT, 'etcdserver: role name is empty');
const NOT_IMPLEMENTED = (): StatusError => new StatusError(Status.UNIMPLEMENTED, 'etcdserver: setpoint does not implement auth users and roles');

export function authService(ctx: EdgeContext): UntypedServiceImplementation {
  const { store } = ctx;
  const ok = async (): Promise<object> => ({ header: currentHeader(store) });
  const fail = (err: () => StatusError) => async (): Promise<object> => {
    throw err();
  };
  // Creating a user or role would need the auth store; an empty name is refused first, as etcd does.
  const create = (empty: () => StatusError) => async (req: Record<string, unknown>): Promise<object> => {
    throw req['name'] === '' ? empty() : NOT_IMPLEMENTED();
  };
  // Auth changes are Raft proposals in etcd, so they are subject to the request size limit too.
  const call = (method: string, fn: (req: Record<string, unknown>) => Promise<object>) =>
    unary<Record<string, unknown>, object>(ctx, SERVICE, method, fn, { proposal: () => true });
  return {
    AuthEnable: call('AuthEnable', fail(ROOT_USER_NOT_EXIST)),
    // Disabling auth that is not enabled succeeds, as in etcd.
    AuthDisable: call('AuthDisable', ok),
    Authenticate: call('Authenticate', fail(AUTH_NOT_ENABLED)),
    UserAdd: call('UserAdd', create(USER_EMPTY)),
    UserGet: call('UserGet', fail(USER_NOT_FOUND)),
    UserList: call('UserList', async () => ({ header: currentHeader(store), users: [] })),
    UserDelete: call('UserDelete', fail(USER_NOT_FOUND)),
    UserChangePassword: call('UserChangePassword', fail(USER_NOT_FOUND)),
    UserGrantRole: call('UserGrantRole', fail(USER_NOT_FOUND)),
    UserRevokeRole: call('UserRevokeRole', fail(USER_NOT_FOUND)),
    RoleAdd: call('RoleAdd', create(ROLE_EMPTY)),
    RoleGet: call('RoleGet', fail(ROLE_NOT_FOUND)),
    RoleList: call('RoleList', async () => ({ header: currentHeader(store), roles: [] })),
    RoleDelete: call('RoleDelete', fail(ROLE_NOT_FOUND)),
    RoleGrantPermission: call('RoleGrantPermission', fail(ROLE_NOT_FOUND)),
    RoleRevokePermission: call('RoleRevokePermission', fail(ROLE_NOT_FOUND)),
  };
}
