// etcdserverpb.Auth mapped 1:1 onto the member's auth store (member/auth-requests.ts): each call passes
// its caller (the `token` metadata's user), since etcd decides every auth change by the caller's root role.
// Every call but the reads is a Raft proposal there, so it is held to the request size limit too.
import { status as Status } from '@grpc/grpc-js';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { AuthApi } from '../auth/auth-api.js';
import type { KeyPermission, PermType } from '../auth/range-perms.js';
import type { EdgeContext, Who } from './edge.js';
import { ETCD_PACKAGE, StatusError, unary } from './edge.js';
import { currentHeader } from './etcd-wire.js';

const SERVICE = `${ETCD_PACKAGE}.Auth`;

const PERM_TYPES: readonly PermType[] = ['READ', 'WRITE', 'READWRITE'];

interface WirePermission {
  readonly permType: string | number;
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
}

type Req = Record<string, unknown>;

function str(req: Req, field: string): string {
  const v = req[field];
  return typeof v === 'string' ? v : '';
}

function bytes(v: unknown): Buffer {
  return Buffer.isBuffer(v) ? v : Buffer.alloc(0);
}

function permType(v: string | number): PermType {
  return PERM_TYPES.find((t, i) => t === v || i === v) ?? 'READ';
}

function parsePermission(p: WirePermission | undefined): KeyPermission {
  return { permType: permType(p?.permType ?? 'READ'), key: bytes(p?.key), rangeEnd: bytes(p?.rangeEnd) };
}

function wirePermission(p: KeyPermission): object {
  return { permType: p.permType, key: Buffer.from(p.key), rangeEnd: Buffer.from(p.rangeEnd) };
}

export function authService(ctx: EdgeContext): UntypedServiceImplementation {
  const { store } = ctx;
  const auth = (): AuthApi => {
    if (!store.auth) throw new StatusError(Status.UNIMPLEMENTED, 'etcdserver: this store has no auth store');
    return store.auth;
  };
  /** A call whose answer is its header and `extra`'s fields. */
  const call = (method: string, fn: (a: AuthApi, req: Req, who: Who) => Promise<object | void>) =>
    unary<Req, object>(
      ctx,
      SERVICE,
      method,
      async (req, _tooLarge, who) => {
        const extra = await fn(auth(), req, who);
        return { header: currentHeader(store), ...(extra ?? {}) };
      },
      { proposal: () => true },
    );
  return {
    AuthEnable: call('AuthEnable', async (a, _req, who) => a.enable(await who())),
    AuthDisable: call('AuthDisable', async (a, _req, who) => a.disable(await who())),
    // The token in the metadata, if any, is not looked at: this is how a client gets a new one.
    Authenticate: call('Authenticate', async (a, req) => a.authenticate(str(req, 'name'), str(req, 'password'))),
    UserAdd: call('UserAdd', async (a, req, who) => {
      const options = req['options'] as { noPassword?: boolean } | null | undefined;
      return a.userAdd(await who(), str(req, 'name'), str(req, 'password'), options?.noPassword === true);
    }),
    UserGet: call('UserGet', async (a, req, who) => a.userGet(await who(), str(req, 'name'))),
    UserList: call('UserList', async (a, _req, who) => a.userList(await who())),
    UserDelete: call('UserDelete', async (a, req, who) => a.userDelete(await who(), str(req, 'name'))),
    UserChangePassword: call('UserChangePassword', async (a, req, who) => a.userChangePassword(await who(), str(req, 'name'), str(req, 'password'))),
    UserGrantRole: call('UserGrantRole', async (a, req, who) => a.userGrantRole(await who(), str(req, 'user'), str(req, 'role'))),
    UserRevokeRole: call('UserRevokeRole', async (a, req, who) => a.userRevokeRole(await who(), str(req, 'name'), str(req, 'role'))),
    RoleAdd: call('RoleAdd', async (a, req, who) => a.roleAdd(await who(), str(req, 'name'))),
    RoleGet: call('RoleGet', async (a, req, who) => ({ perm: (await a.roleGet(await who(), str(req, 'role'))).perms.map(wirePermission) })),
    RoleList: call('RoleList', async (a, _req, who) => a.roleList(await who())),
    RoleDelete: call('RoleDelete', async (a, req, who) => a.roleDelete(await who(), str(req, 'role'))),
    RoleGrantPermission: call('RoleGrantPermission', async (a, req, who) =>
      a.roleGrantPermission(await who(), str(req, 'name'), parsePermission(req['perm'] as WirePermission | undefined)),
    ),
    RoleRevokePermission: call('RoleRevokePermission', async (a, req, who) => a.roleRevokePermission(await who(), str(req, 'role'), bytes(req['key']), bytes(req['rangeEnd']))),
  };
}
