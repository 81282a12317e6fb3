// The replicated auth state of etcd v3 (auth/store.go): users with bcrypt-hashed passwords, roles with key
// permissions, the enabled flag and the auth revision that every change bumps. Each member applies the same
// committed operations in the same order, so every member holds the same state; the store keeps it with the
// key-value data (snapshot() / AuthState.restore) so it survives restarts and travels with snapshots.
// Errors are etcd's (kv/errors.ts), checked in etcd 3.4's order.
import { etcdError } from '../../kv/errors.js';
import type { KeyPermission } from './range-perms.js';
import { RangePerms } from './range-perms.js';

export const ROOT_USER = 'root';
export const ROOT_ROLE = 'root';

export interface AuthUser {
  readonly name: string;
  /** The bcrypt hash ("$2a$10$…"), empty with noPassword. */
  readonly password: string;
  /** Sorted, as etcd keeps them. */
  readonly roles: readonly string[];
  readonly noPassword: boolean;
}

export interface AuthRole {
  readonly name: string;
  /** Sorted by key, as etcd keeps them. */
  readonly perms: readonly KeyPermission[];
}

/** One committed auth operation. Passwords arrive hashed: hashing is done once, before proposing. */
export type AuthOp =
  | { readonly op: 'enable' }
  | { readonly op: 'disable' }
  | { readonly op: 'userAdd'; readonly name: string; readonly password: string; readonly noPassword: boolean }
  | { readonly op: 'userDelete'; readonly name: string }
  | { readonly op: 'userChangePassword'; readonly name: string; readonly password: string }
  | { readonly op: 'userGrantRole'; readonly user: string; readonly role: string }
  | { readonly op: 'userRevokeRole'; readonly name: string; readonly role: string }
  | { readonly op: 'roleAdd'; readonly name: string }
  | { readonly op: 'roleDelete'; readonly role: string }
  | { readonly op: 'roleGrantPermission'; readonly name: string; readonly perm: KeyPermission }
  | { readonly op: 'roleRevokePermission'; readonly role: string; readonly key: Uint8Array; readonly rangeEnd: Uint8Array };

/** The state as it is persisted (plain data, msgpack-able). */
export interface AuthSnapshot {
  readonly enabled: boolean;
  readonly revision: number;
  readonly users: readonly AuthUser[];
  readonly roles: readonly AuthRole[];
}

/** Who a request comes from: a token's or a certificate's user, and the auth revision it was checked at. */
export interface AuthInfo {
  readonly username: string;
  readonly revision: number;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a).equals(Buffer.from(b));
}

export class AuthState {
  private enabled = false;
  /** Starts at 1 (etcd commits a first revision when it creates the store); 0 in an AuthInfo means no user. */
  private rev = 1;
  private readonly users = new Map<string, AuthUser>();
  private readonly roles = new Map<string, AuthRole>();
  /** Merged permissions per user, dropped when the user or any role changes (range_perm_cache.go). */
  private readonly permCache = new Map<string, RangePerms>();

  static restore(s: AuthSnapshot | undefined): AuthState {
    const a = new AuthState();
    if (!s) return a;
    a.enabled = s.enabled;
    a.rev = s.revision;
    for (const u of s.users) a.users.set(u.name, { ...u, roles: [...u.roles] });
    for (const r of s.roles) a.roles.set(r.name, { name: r.name, perms: r.perms.map((p) => ({ permType: p.permType, key: Buffer.from(p.key), rangeEnd: Buffer.from(p.rangeEnd) })) });
    return a;
  }

  snapshot(): AuthSnapshot {
    return { enabled: this.enabled, revision: this.rev, users: [...this.users.values()], roles: [...this.roles.values()] };
  }

  get isEnabled(): boolean {
    return this.enabled;
  }

  get revision(): number {
    return this.rev;
  }

  user(name: string): AuthUser | undefined {
    return this.users.get(name);
  }

  // ---- reads (etcd serves these from the applied state) ----

  userGet(name: string): { roles: string[] } {
    const u = this.users.get(name);
    if (!u) throw etcdError('USER_NOT_FOUND');
    return { roles: [...u.roles] };
  }

  userList(): string[] {
    return [...this.users.keys()].sort();
  }

  roleGet(name: string): { perms: KeyPermission[] } {
    const r = this.roles.get(name);
    if (!r) throw etcdError('ROLE_NOT_FOUND');
    return { perms: [...r.perms] };
  }

  roleList(): string[] {
    return [...this.roles.keys()].sort();
  }

  hasRole(user: string, role: string): boolean {
    return this.users.get(user)?.roles.includes(role) ?? false;
  }

  // ---- applying committed operations ----

  /** Applies one operation; names the users whose tokens it invalidates. */
  apply(o: AuthOp): { invalidated: readonly string[] } {
    switch (o.op) {
      case 'enable': {
        if (this.enabled) return { invalidated: [] };
        const root = this.users.get(ROOT_USER);
        if (!root) throw etcdError('ROOT_USER_NOT_EXIST');
        if (!root.roles.includes(ROOT_ROLE)) throw etcdError('ROOT_ROLE_NOT_EXIST');
        this.enabled = true;
        this.permCache.clear();
        return { invalidated: [] };
      }
      case 'disable':
        if (!this.enabled) return { invalidated: [] };
        this.enabled = false;
        this.rev++;
        return { invalidated: [...this.users.keys()] };
      case 'userAdd':
        if (o.name === '') throw etcdError('USER_EMPTY');
        if (this.users.has(o.name)) throw etcdError('USER_ALREADY_EXIST');
        this.users.set(o.name, { name: o.name, password: o.noPassword ? '' : o.password, roles: [], noPassword: o.noPassword });
        return this.bump([]);
      case 'userDelete':
        if (this.enabled && o.name === ROOT_USER) throw etcdError('INVALID_AUTH_MGMT');
        if (!this.users.delete(o.name)) throw etcdError('USER_NOT_FOUND');
        return this.bump([o.name]);
      case 'userChangePassword': {
        const u = this.users.get(o.name);
        if (!u) throw etcdError('USER_NOT_FOUND');
        this.users.set(o.name, { ...u, password: o.password });
        return this.bump([o.name]);
      }
      case 'userGrantRole': {
        const u = this.users.get(o.user);
        if (!u) throw etcdError('USER_NOT_FOUND');
        if (o.role !== ROOT_ROLE && !this.roles.has(o.role)) throw etcdError('ROLE_NOT_FOUND');
        if (u.roles.includes(o.role)) return { invalidated: [] };
        this.users.set(o.user, { ...u, roles: [...u.roles, o.role].sort() });
        return this.bump([]);
      }
      case 'userRevokeRole': {
        if (this.enabled && o.name === ROOT_USER && o.role === ROOT_ROLE) throw etcdError('INVALID_AUTH_MGMT');
        const u = this.users.get(o.name);
        if (!u) throw etcdError('USER_NOT_FOUND');
        if (!u.roles.includes(o.role)) throw etcdError('ROLE_NOT_GRANTED');
        this.users.set(o.name, { ...u, roles: u.roles.filter((r) => r !== o.role) });
        return this.bump([]);
      }
      case 'roleAdd':
        if (o.name === '') throw etcdError('ROLE_EMPTY');
        if (this.roles.has(o.name)) throw etcdError('ROLE_ALREADY_EXIST');
        this.roles.set(o.name, { name: o.name, perms: [] });
        return this.bump([]);
      case 'roleDelete': {
        if (this.enabled && o.role === ROOT_ROLE) throw etcdError('INVALID_AUTH_MGMT');
        if (!this.roles.delete(o.role)) throw etcdError('ROLE_NOT_FOUND');
        for (const u of this.users.values()) {
          if (u.roles.includes(o.role)) this.users.set(u.name, { ...u, roles: u.roles.filter((r) => r !== o.role) });
        }
        return this.bump([]);
      }
      case 'roleGrantPermission': {
        const r = this.roles.get(o.name);
        if (!r) throw etcdError('ROLE_NOT_FOUND');
        const p: KeyPermission = { permType: o.perm.permType, key: Buffer.from(o.perm.key), rangeEnd: Buffer.from(o.perm.rangeEnd) };
        const same = r.perms.findIndex((q) => bytesEqual(q.key, p.key) && bytesEqual(q.rangeEnd, p.rangeEnd));
        const perms = same >= 0 ? r.perms.map((q, i) => (i === same ? p : q)) : [...r.perms, p];
        this.roles.set(o.name, { name: o.name, perms: perms.sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key))) });
        return this.bump([]);
      }
      case 'roleRevokePermission': {
        const r = this.roles.get(o.role);
        if (!r) throw etcdError('ROLE_NOT_FOUND');
        const perms = r.perms.filter((q) => !(bytesEqual(q.key, o.key) && bytesEqual(q.rangeEnd, o.rangeEnd)));
        if (perms.length === r.perms.length) throw etcdError('PERMISSION_NOT_GRANTED');
        this.roles.set(o.role, { name: o.role, perms });
        return this.bump([]);
      }
    }
  }

  /** Every change but enable bumps the revision and drops the cached permissions. */
  private bump(invalidated: readonly string[]): { invalidated: readonly string[] } {
    this.rev++;
    this.permCache.clear();
    return { invalidated };
  }

  // ---- checks (auth/store.go isOpPermitted, IsAdminPermitted) ----

  /** A request on [key, rangeEnd) by `ai` (undefined: no token, no certificate). */
  checkOp(ai: AuthInfo | undefined, kind: 'READ' | 'WRITE', key: Uint8Array, rangeEnd: Uint8Array): void {
    if (!this.enabled) return;
    if (!ai || ai.revision === 0) throw etcdError('USER_EMPTY');
    if (ai.revision < this.rev) throw etcdError('AUTH_OLD_REVISION');
    const u = this.users.get(ai.username);
    if (!u) throw etcdError('PERMISSION_DENIED');
    if (u.roles.includes(ROOT_ROLE)) return;
    if (!this.permsOf(u).permits(kind, key, rangeEnd)) throw etcdError('PERMISSION_DENIED');
  }

  checkAdmin(ai: AuthInfo | undefined): void {
    if (!this.enabled) return;
    if (!ai || ai.username === '') throw etcdError('USER_EMPTY');
    const u = this.users.get(ai.username);
    if (!u) throw etcdError('USER_NOT_FOUND');
    if (!u.roles.includes(ROOT_ROLE)) throw etcdError('PERMISSION_DENIED');
  }

  isAdmin(ai: AuthInfo | undefined): boolean {
    if (!this.enabled) return true;
    const u = ai ? this.users.get(ai.username) : undefined;
    return u?.roles.includes(ROOT_ROLE) ?? false;
  }

  private permsOf(u: AuthUser): RangePerms {
    let p = this.permCache.get(u.name);
    if (!p) {
      const perms: KeyPermission[] = [];
      for (const r of u.roles) perms.push(...(this.roles.get(r)?.perms ?? []));
      p = new RangePerms(perms);
      this.permCache.set(u.name, p);
    }
    return p;
  }
}

