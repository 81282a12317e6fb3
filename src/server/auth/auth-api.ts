// What the etcd services need of a member's auth store: who a call comes from (its token), the checks that
// the services make themselves (watch creation, admin-only maintenance), and the Auth service's calls. Each
// call takes the caller (undefined: no token), since etcd decides by the caller's user and revision.
import type { KeyPermission } from './range-perms.js';
import type { AuthInfo } from './auth-state.js';

export interface AuthApi {
  readonly enabled: boolean;
  /**
   * The caller a token names; etcd's "invalid auth token" for an unknown one. A token issued at a Raft
   * index this member has not applied yet is waited for (a client may ask another member right after
   * authenticating). Without a token, the user `peerName` names (a verified client certificate's CN under
   * --client-cert-auth, at the store's auth revision, as etcd's AuthInfoFromTLS); undefined without either.
   */
  who(token: string | undefined, peerName?: string): Promise<AuthInfo | undefined>;
  /** Read permission on [key, rangeEnd) (empty: the key; "\0": from the key on), as a watch creation checks it. */
  checkRead(ai: AuthInfo | undefined, key: Uint8Array, rangeEnd: Uint8Array): void;
  /** The root role, as membership changes need it (etcdserver errors). */
  checkAdmin(ai: AuthInfo | undefined): void;
  /** Admin-only Maintenance calls (etcd's authMaintenanceServer): root role required, auth package errors. */
  checkMaintenance(who: () => Promise<AuthInfo | undefined>): Promise<void>;

  enable(ai: AuthInfo | undefined): Promise<void>;
  disable(ai: AuthInfo | undefined): Promise<void>;
  authenticate(name: string, password: string): Promise<{ token: string }>;
  userAdd(ai: AuthInfo | undefined, name: string, password: string, noPassword: boolean): Promise<void>;
  userGet(ai: AuthInfo | undefined, name: string): Promise<{ roles: string[] }>;
  userList(ai: AuthInfo | undefined): Promise<{ users: string[] }>;
  userDelete(ai: AuthInfo | undefined, name: string): Promise<void>;
  userChangePassword(ai: AuthInfo | undefined, name: string, password: string): Promise<void>;
  userGrantRole(ai: AuthInfo | undefined, user: string, role: string): Promise<void>;
  userRevokeRole(ai: AuthInfo | undefined, name: string, role: string): Promise<void>;
  roleAdd(ai: AuthInfo | undefined, name: string): Promise<void>;
  roleGet(ai: AuthInfo | undefined, role: string): Promise<{ perms: KeyPermission[] }>;
  roleList(ai: AuthInfo | undefined): Promise<{ roles: string[] }>;
  roleDelete(ai: AuthInfo | undefined, role: string): Promise<void>;
  roleGrantPermission(ai: AuthInfo | undefined, name: string, perm: KeyPermission): Promise<void>;
  roleRevokePermission(ai: AuthInfo | undefined, role: string, key: Uint8Array, rangeEnd: Uint8Array): Promise<void>;
}
