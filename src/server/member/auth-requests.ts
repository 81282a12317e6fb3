// A member's auth store, as etcd 3.4's: every change to users, roles and the enabled flag is a Raft entry
// applied on every member in log order (AuthState, persisted with the key-value store so it survives
// restarts and travels with snapshots); Authenticate checks the password, then issues the token through
// Raft so every member knows it; KV writes made while auth is on carry their caller into the log and are
// checked as they apply; reads are checked here, then refused if the auth revision moved meanwhile.
import type { AuthApi } from '../auth/auth-api.js';
import type { AuthInfo, AuthOp, AuthSnapshot } from '../auth/auth-state.js';
import type { KeyPermission } from '../auth/range-perms.js';
import type { AuthApplier } from './applier.js';
import type { AsUser, AuthChange, InternalRequest } from './requests.js';
import type { MemberCore } from './member-core.js';
import type { Proposals } from './proposals.js';
import { AuthState } from '../auth/auth-state.js';
import { RequestPerms } from '../auth/request-perms.js';
import { SimpleTokens, tokenPrefix } from '../auth/simple-tokens.js';
import type { JwtTokens } from '../auth/jwt-tokens.js';
import { comparePassword, hashPassword } from '../auth/bcrypt-pool.js';
import { EtcdError, etcdError } from '../../kv/errors.js';

export interface AuthOptions {
  /** etcd's --bcrypt-cost (10). */
  readonly bcryptCost: number;
  /** etcd's --auth-token-ttl, in ms (300 s). */
  readonly tokenTtlMs: number;
  /** --auth-token jwt,…: signed tokens instead of simple ones. */
  readonly jwt?: JwtTokens;
}

/** The auth package's errors that Maintenance returns untranslated in etcd 3.4 (so gRPC says Unknown). */
const RAW: Partial<Record<EtcdError['code'], EtcdError['code']>> = {
  PERMISSION_DENIED: 'AUTH_RAW_PERMISSION_DENIED',
  USER_EMPTY: 'AUTH_RAW_USER_EMPTY',
  USER_NOT_FOUND: 'AUTH_RAW_USER_NOT_FOUND',
  INVALID_AUTH_TOKEN: 'AUTH_RAW_INVALID_TOKEN',
};

export class AuthRequests implements AuthApi, AuthApplier {
  private state = new AuthState();
  private perms: RequestPerms;
  private readonly tokens: SimpleTokens;

  constructor(
    private readonly c: MemberCore,
    private readonly proposals: Proposals,
    /** Linearizes a read (ReadIndex), as a Range does. */
    private readonly linearize: () => Promise<void>,
    private readonly opts: AuthOptions,
  ) {
    this.tokens = new SimpleTokens(opts.tokenTtlMs);
    this.perms = this.permsOf(this.state);
  }

  /** The state the key-value store holds: at start, and after a snapshot from the leader replaced it. */
  load(s: unknown): void {
    this.state = AuthState.restore(s as AuthSnapshot | undefined);
    this.perms = this.permsOf(this.state);
    this.tokens.clear();
  }

  private permsOf(state: AuthState): RequestPerms {
    return new RequestPerms(state, (lease) => {
      try {
        return this.c.kv.leaseTimeToLive(lease, true).keys.map((k) => Buffer.from(k, 'latin1'));
      } catch {
        return [];
      }
    });
  }

  get enabled(): boolean {
    return this.state.isEnabled;
  }

  async who(token: string | undefined, peerName?: string): Promise<AuthInfo | undefined> {
    if (token === undefined) return peerName === undefined ? undefined : { username: peerName, revision: this.state.revision };
    if (this.opts.jwt) {
      // A JWT names its user and the auth revision it was issued at (etcd's tokenJWT.info).
      const claims = await this.opts.jwt.verify(token);
      if (!claims) throw etcdError('INVALID_AUTH_TOKEN');
      return claims;
    }
    let user = this.tokens.user(token);
    // "<prefix>.<index>": issued by an entry this member may not have applied yet; a ReadIndex round brings it.
    const index = Number(token.slice(token.lastIndexOf('.') + 1));
    if (user === undefined && Number.isSafeInteger(index) && index > this.c.node.applied()) {
      await this.linearize();
      user = this.tokens.user(token);
    }
    if (user === undefined) throw etcdError('INVALID_AUTH_TOKEN');
    // A simple token names a user; its revision is the store's as it is checked (etcd's tokenSimple.info).
    return { username: user, revision: this.state.revision };
  }

  checkRead(ai: AuthInfo | undefined, key: Uint8Array, rangeEnd: Uint8Array): void {
    this.state.checkOp(ai, 'READ', key, rangeEnd);
  }

  checkAdmin(ai: AuthInfo | undefined): void {
    this.state.checkAdmin(ai);
  }

  async checkMaintenance(who: () => Promise<AuthInfo | undefined>): Promise<void> {
    try {
      this.state.checkAdmin(await who());
    } catch (e) {
      const raw = e instanceof EtcdError ? RAW[e.code] : undefined;
      throw raw ? etcdError(raw) : e;
    }
  }

  // ---- KV: the caller into the log for writes, checks around local reads ----

  /** A write as it is proposed: with its caller while auth is enabled, bare (its binary layout) otherwise. */
  asCaller(r: InternalRequest, ai: AuthInfo | undefined): InternalRequest {
    if (!this.state.isEnabled) return r;
    return { t: 'asUser', id: r.id, user: ai?.username ?? '', authRev: ai?.revision ?? 0, req: r };
  }

  /**
   * A read served from this member's state (etcd's doSerialize): checked before, and refused after if an
   * auth change applied while it was served, since the check may no longer hold.
   */
  async read<T>(ai: AuthInfo | undefined, check: (p: RequestPerms, ai: AuthInfo | undefined) => void, get: () => Promise<T>): Promise<T> {
    if (!this.state.isEnabled) return get();
    check(this.perms, ai);
    const r = await get();
    if (ai && ai.revision !== 0 && ai.revision !== this.state.revision) throw etcdError('AUTH_OLD_REVISION');
    return r;
  }

  // ---- applying (every member, in log order) ----

  apply(r: Extract<InternalRequest, { t: 'auth' | 'authenticate' }>, index: number): unknown {
    if (r.t === 'authenticate') return this.applyAuthenticate(r.name, r.prefix, index);
    this.state.checkAdmin(r.user === '' ? undefined : { username: r.user, revision: r.authRev });
    const { invalidated } = this.state.apply(r.op);
    if (r.op.op === 'disable') this.tokens.clear();
    for (const u of invalidated) this.tokens.invalidateUser(u);
    this.c.kv.setAuthState(this.state.snapshot());
    return undefined;
  }

  /** A simple token is issued on every member; a JWT is signed by the member asked, at this auth revision. */
  private applyAuthenticate(name: string, prefix: string, index: number): { token: string } | { revision: number } {
    if (!this.state.isEnabled) throw etcdError('AUTH_NOT_ENABLED');
    const u = this.state.user(name);
    if (!u || u.noPassword) throw etcdError('AUTH_FAILED');
    if (this.opts.jwt) return { revision: this.state.revision };
    const token = `${prefix}.${index}`;
    this.tokens.assign(token, name);
    return { token };
  }

  check(r: AsUser): void {
    const ai: AuthInfo = { username: r.user, revision: r.authRev };
    const q = r.req;
    switch (q.t) {
      case 'put':
        return this.perms.put(ai, q.req);
      case 'deleteRange':
        return this.perms.deleteRange(ai, q.req);
      case 'txn':
        return this.perms.txn(ai, q.req);
      case 'leaseRevoke':
        return this.perms.leasePuts(ai, q.lease);
      default:
        return undefined;
    }
  }

  // ---- the Auth service ----

  private async change(ai: AuthInfo | undefined, op: AuthOp): Promise<void> {
    const r: AuthChange = { t: 'auth', id: this.c.nextReqId(), op, user: ai?.username ?? '', authRev: ai?.revision ?? 0 };
    await this.proposals.proposeRequest<undefined>(r);
  }

  /** etcd proposes the reads too and checks the root role as they apply; here they are linearized, then checked. */
  private async adminRead<T>(ai: AuthInfo | undefined, get: () => T): Promise<T> {
    await this.linearize();
    this.state.checkAdmin(ai);
    return get();
  }

  enable(ai: AuthInfo | undefined): Promise<void> {
    return this.change(ai, { op: 'enable' });
  }

  disable(ai: AuthInfo | undefined): Promise<void> {
    return this.change(ai, { op: 'disable' });
  }

  async authenticate(name: string, password: string): Promise<{ token: string }> {
    await this.linearize();
    for (;;) {
      if (!this.state.isEnabled) throw etcdError('AUTH_NOT_ENABLED');
      const checkedAt = this.state.revision;
      const u = this.state.user(name);
      if (u?.noPassword === true) throw etcdError('AUTH_RAW_NO_PASSWORD_USER');
      if (!u || !(await comparePassword(password, u.password))) throw etcdError('AUTH_FAILED');
      const r = await this.proposals.proposeRequest<{ token: string } | { revision: number }>({ t: 'authenticate', id: this.c.nextReqId(), name, prefix: tokenPrefix() });
      // The password was checked against a state that changed before the token was issued: check again.
      if (checkedAt !== this.state.revision) continue;
      if ('token' in r) return r;
      return { token: await (this.opts.jwt as JwtTokens).sign(name, r.revision) };
    }
  }

  async userAdd(ai: AuthInfo | undefined, name: string, password: string, noPassword: boolean): Promise<void> {
    // Hashed once, here, so the log never holds the password (etcd 3.5 does the same).
    return this.change(ai, { op: 'userAdd', name, password: noPassword ? '' : await hashPassword(password, this.opts.bcryptCost), noPassword });
  }

  userGet(ai: AuthInfo | undefined, name: string): Promise<{ roles: string[] }> {
    return this.adminRead(ai, () => this.state.userGet(name));
  }

  userList(ai: AuthInfo | undefined): Promise<{ users: string[] }> {
    return this.adminRead(ai, () => ({ users: this.state.userList() }));
  }

  userDelete(ai: AuthInfo | undefined, name: string): Promise<void> {
    return this.change(ai, { op: 'userDelete', name });
  }

  async userChangePassword(ai: AuthInfo | undefined, name: string, password: string): Promise<void> {
    return this.change(ai, { op: 'userChangePassword', name, password: await hashPassword(password, this.opts.bcryptCost) });
  }

  userGrantRole(ai: AuthInfo | undefined, user: string, role: string): Promise<void> {
    return this.change(ai, { op: 'userGrantRole', user, role });
  }

  userRevokeRole(ai: AuthInfo | undefined, name: string, role: string): Promise<void> {
    return this.change(ai, { op: 'userRevokeRole', name, role });
  }

  roleAdd(ai: AuthInfo | undefined, name: string): Promise<void> {
    return this.change(ai, { op: 'roleAdd', name });
  }

  roleGet(ai: AuthInfo | undefined, role: string): Promise<{ perms: KeyPermission[] }> {
    return this.adminRead(ai, () => this.state.roleGet(role));
  }

  roleList(ai: AuthInfo | undefined): Promise<{ roles: string[] }> {
    return this.adminRead(ai, () => ({ roles: this.state.roleList() }));
  }

  roleDelete(ai: AuthInfo | undefined, role: string): Promise<void> {
    return this.change(ai, { op: 'roleDelete', role });
  }

  roleGrantPermission(ai: AuthInfo | undefined, name: string, perm: KeyPermission): Promise<void> {
    return this.change(ai, { op: 'roleGrantPermission', name, perm });
  }

  roleRevokePermission(ai: AuthInfo | undefined, role: string, key: Uint8Array, rangeEnd: Uint8Array): Promise<void> {
    return this.change(ai, { op: 'roleRevokePermission', role, key, rangeEnd });
  }
}
