import { describe, expect, it } from 'vitest';
import { errorOf } from './error-of.js';
import { AuthState } from '../../../src/server/auth/auth-state.js';
import type { AuthOp } from '../../../src/server/auth/auth-state.js';
import { RangePerms } from '../../../src/server/auth/range-perms.js';
import type { PermType } from '../../../src/server/auth/range-perms.js';
import { SimpleTokens } from '../../../src/server/auth/simple-tokens.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const perm = (permType: PermType, key: string, rangeEnd = '') => ({ permType, key: b(key), rangeEnd: b(rangeEnd) });


describe('range permissions (range_perm_cache semantics)', () => {
  it('a key permission covers that key only', () => {
    const p = new RangePerms([perm('READ', 'a')]);
    expect(p.permits('READ', b('a'), b(''))).toBe(true);
    expect(p.permits('READ', b('ab'), b(''))).toBe(false);
    expect(p.permits('WRITE', b('a'), b(''))).toBe(false);
    // The range [a, a\0) is the key a.
    expect(p.permits('READ', b('a'), b('a\0'))).toBe(true);
    expect(p.permits('READ', b('a'), b('b'))).toBe(false);
  });

  it('a prefix permission covers keys and sub-ranges inside it, not ranges reaching out of it', () => {
    const p = new RangePerms([perm('READWRITE', 'foo/', 'foo0')]);
    expect(p.permits('WRITE', b('foo/x'), b(''))).toBe(true);
    expect(p.permits('READ', b('foo/a'), b('foo/b'))).toBe(true);
    expect(p.permits('READ', b('foo/'), b('foo0'))).toBe(true);
    expect(p.permits('READ', b('foo/'), b('foo1'))).toBe(false);
    expect(p.permits('READ', b('fo'), b('foo0'))).toBe(false);
    expect(p.permits('READ', b('foo/'), b('\0'))).toBe(false);
  });

  it('"\\0" as range_end means from the key on, in permissions and requests', () => {
    const p = new RangePerms([perm('READ', 'm', '\0')]);
    expect(p.permits('READ', b('zzz'), b(''))).toBe(true);
    expect(p.permits('READ', b('m'), b('\0'))).toBe(true);
    expect(p.permits('READ', b('l'), b('\0'))).toBe(false);
  });

  it('adjacent permissions of several roles cover a range together; a gap does not', () => {
    const p = new RangePerms([perm('READ', 'a', 'c'), perm('READWRITE', 'c', 'e'), perm('WRITE', 'f', 'g')]);
    expect(p.permits('READ', b('a'), b('e'))).toBe(true);
    expect(p.permits('READ', b('a'), b('f'))).toBe(false);
    expect(p.permits('WRITE', b('c'), b('e'))).toBe(true);
    expect(p.permits('WRITE', b('d'), b('g'))).toBe(false);
  });
});

describe('auth state (auth/store.go rules)', () => {
  const setup = (): AuthState => {
    const a = AuthState.restore(undefined);
    const ops: AuthOp[] = [
      { op: 'userAdd', name: 'root', password: 'h', noPassword: false },
      { op: 'userGrantRole', user: 'root', role: 'root' },
      { op: 'roleAdd', name: 'r' },
      { op: 'roleGrantPermission', name: 'r', perm: perm('READWRITE', 'foo/', 'foo0') },
      { op: 'userAdd', name: 'alice', password: 'h', noPassword: false },
      { op: 'userGrantRole', user: 'alice', role: 'r' },
    ];
    for (const o of ops) a.apply(o);
    return a;
  };

  it('enabling needs root with the root role', () => {
    const a = AuthState.restore(undefined);
    expect(errorOf(() => a.apply({ op: 'enable' }))).toBe('etcdserver: root user does not exist');
    a.apply({ op: 'userAdd', name: 'root', password: 'h', noPassword: false });
    expect(errorOf(() => a.apply({ op: 'enable' }))).toBe('etcdserver: root user does not have root role');
    a.apply({ op: 'userGrantRole', user: 'root', role: 'root' });
    const rev = a.revision;
    a.apply({ op: 'enable' });
    expect(a.isEnabled).toBe(true);
    expect(a.revision).toBe(rev); // enabling does not bump the revision; disabling does
    a.apply({ op: 'disable' });
    expect(a.revision).toBe(rev + 1);
  });

  it("names etcd's errors for users and roles", () => {
    const a = setup();
    expect(errorOf(() => a.apply({ op: 'userAdd', name: '', password: '', noPassword: false }))).toBe('etcdserver: user name is empty');
    expect(errorOf(() => a.apply({ op: 'userAdd', name: 'alice', password: '', noPassword: false }))).toBe('etcdserver: user name already exists');
    expect(errorOf(() => a.apply({ op: 'roleAdd', name: 'r' }))).toBe('etcdserver: role name already exists');
    expect(errorOf(() => a.apply({ op: 'userGrantRole', user: 'alice', role: 'nope' }))).toBe('etcdserver: role name not found');
    expect(errorOf(() => a.apply({ op: 'userGrantRole', user: 'bob', role: 'r' }))).toBe('etcdserver: user name not found');
    expect(errorOf(() => a.apply({ op: 'userRevokeRole', name: 'root', role: 'r' }))).toBe('etcdserver: role is not granted to the user');
    expect(errorOf(() => a.apply({ op: 'roleRevokePermission', role: 'r', key: b('x'), rangeEnd: b('') }))).toBe(
      'etcdserver: permission is not granted to the role',
    );
    a.apply({ op: 'enable' });
    expect(errorOf(() => a.apply({ op: 'userDelete', name: 'root' }))).toBe('etcdserver: invalid auth management');
    expect(errorOf(() => a.apply({ op: 'roleDelete', role: 'root' }))).toBe('etcdserver: invalid auth management');
  });

  it('checks requests as isOpPermitted does, the revision included', () => {
    const a = setup();
    // Disabled: everything passes, with or without a user.
    expect(errorOf(() => a.checkOp(undefined, 'WRITE', b('x'), b('')))).toBe('ok');
    a.apply({ op: 'enable' });
    const alice = { username: 'alice', revision: a.revision };
    expect(errorOf(() => a.checkOp(undefined, 'READ', b('foo/a'), b('')))).toBe('etcdserver: user name is empty');
    expect(errorOf(() => a.checkOp(alice, 'WRITE', b('foo/a'), b('')))).toBe('ok');
    expect(errorOf(() => a.checkOp(alice, 'WRITE', b('bar'), b('')))).toBe('etcdserver: permission denied');
    expect(errorOf(() => a.checkOp({ username: 'root', revision: a.revision }, 'WRITE', b('bar'), b('\0')))).toBe('ok');
    expect(errorOf(() => a.checkAdmin(alice))).toBe('etcdserver: permission denied');
    // Revoking the permission bumps the revision: an older AuthInfo is refused, a fresh one is denied.
    a.apply({ op: 'roleRevokePermission', role: 'r', key: b('foo/'), rangeEnd: b('foo0') });
    expect(errorOf(() => a.checkOp(alice, 'WRITE', b('foo/a'), b('')))).toBe('etcdserver: revision of auth store is old');
    expect(errorOf(() => a.checkOp({ ...alice, revision: a.revision }, 'WRITE', b('foo/a'), b('')))).toBe('etcdserver: permission denied');
  });

  it('round-trips through its snapshot', () => {
    const a = setup();
    a.apply({ op: 'enable' });
    const back = AuthState.restore(structuredClone(a.snapshot()));
    expect(back.snapshot()).toEqual(a.snapshot());
    expect(back.isEnabled).toBe(true);
    expect(errorOf(() => back.checkOp({ username: 'alice', revision: back.revision }, 'READ', b('foo/x'), b('')))).toBe('ok');
  });
});

describe('simple tokens', () => {
  it('expire a TTL after their last use, and go with their user', () => {
    let now = 0;
    const t = new SimpleTokens(300_000, () => now);
    t.assign('abc.1', 'alice');
    t.assign('def.2', 'bob');
    now = 299_000;
    expect(t.user('abc.1')).toBe('alice');
    now = 500_000;
    expect(t.user('abc.1')).toBe('alice'); // renewed at 299 s
    expect(t.user('def.2')).toBeUndefined();
    t.invalidateUser('alice');
    expect(t.user('abc.1')).toBeUndefined();
  });
});
