// etcd's auth bucket records (src/kv/etcd-auth-records.ts): the auth state an AuthState builds, written as
// etcd 3.4's records and read back into the same state (the bytes of a record etcd wrote are checked against
// a real etcd in test/e2e/auth-snapshot.test.ts), and every kind of malformed record refused by name.
import { describe, expect, it } from 'vitest';
import { AuthRecordError, etcdAuthBuckets, readEtcdAuthBuckets } from '../../src/kv/etcd-auth-records.js';
import type { AuthImage } from '../../src/kv/etcd-auth-records.js';
import { AuthState } from '../../src/server/auth/auth-state.js';
import type { AuthSnapshot } from '../../src/server/auth/auth-state.js';

const HASH = `$2a$04$${'a'.repeat(53)}`;
const b = (s: string): Buffer => Buffer.from(s, 'latin1');
type Entry = readonly [Buffer, Buffer];

/** An AuthState with users, roles and every kind of permission, auth enabled. */
function state(): AuthState {
  const a = new AuthState();
  a.apply({ op: 'userAdd', name: 'root', password: HASH, noPassword: false });
  a.apply({ op: 'userGrantRole', user: 'root', role: 'root' });
  a.apply({ op: 'roleAdd', name: 'docs' });
  a.apply({ op: 'roleGrantPermission', name: 'docs', perm: { permType: 'READWRITE', key: b('/docs/'), rangeEnd: b('/docs0') } });
  a.apply({ op: 'roleGrantPermission', name: 'docs', perm: { permType: 'READ', key: b('/a'), rangeEnd: b('') } });
  a.apply({ op: 'roleGrantPermission', name: 'docs', perm: { permType: 'WRITE', key: b('/z'), rangeEnd: b('\0') } });
  a.apply({ op: 'roleAdd', name: 'empty' });
  a.apply({ op: 'userAdd', name: 'zoë', password: HASH, noPassword: false });
  a.apply({ op: 'userGrantRole', user: 'zoë', role: 'empty' });
  a.apply({ op: 'userGrantRole', user: 'zoë', role: 'docs' });
  a.apply({ op: 'userAdd', name: 'cn-only', password: '', noPassword: true });
  a.apply({ op: 'enable' });
  return a;
}

const read = (buckets: { auth: readonly Entry[]; authUsers: readonly Entry[]; authRoles: readonly Entry[] }): AuthImage =>
  readEtcdAuthBuckets(buckets.auth, buckets.authUsers, buckets.authRoles);

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(AuthRecordError);
    return (e as Error).message;
  }
  throw new Error('not refused');
}

describe("etcd's auth bucket records", () => {
  it('writes the state as etcd records and reads the same state back', () => {
    const snap: AuthSnapshot = state().snapshot();
    // The key-value layer's view of the state is the auth package's snapshot, field for field.
    const image: AuthImage = snap;
    const buckets = etcdAuthBuckets(image);
    expect(buckets.auth.map(([k, v]) => [k.toString(), v.toString('hex')])).toEqual([
      ['authEnabled', '01'],
      ['authRevision', snap.revision.toString(16).padStart(16, '0')],
    ]);
    expect(buckets.authUsers.map(([k]) => k.toString())).toEqual(['cn-only', 'root', 'zoë']);
    // etcd 3.4 writes options always: empty, or no_password.
    expect(buckets.authUsers[0]?.[1].toString('hex')).toBe(`0a07${b('cn-only').toString('hex')}22020801`);
    expect(buckets.authUsers[1]?.[1].toString('hex')).toBe(`0a04${b('root').toString('hex')}123c${b(HASH).toString('hex')}1a04${b('root').toString('hex')}2200`);
    const back = AuthState.restore(read(buckets) as AuthSnapshot);
    // The same users and roles (etcd's buckets hold them in name order, the state in the order they came).
    const byName = <T extends { name: string }>(xs: readonly T[]): T[] => [...xs].sort((x, y) => Buffer.compare(Buffer.from(x.name), Buffer.from(y.name)));
    const sorted = (s: AuthSnapshot): AuthSnapshot => ({ ...s, users: byName(s.users), roles: byName(s.roles) });
    expect(sorted(back.snapshot())).toEqual(sorted(snap));
    expect(back.roleGet('docs').perms.map((p) => p.permType)).toEqual(['READ', 'READWRITE', 'WRITE']);
  });

  it('reads no state as a fresh etcd store, and no revision as the first one', () => {
    const fresh = etcdAuthBuckets(undefined);
    expect(fresh.auth.map(([k, v]) => [k.toString(), v.toString('hex')])).toEqual([['authRevision', '0000000000000001']]);
    expect(read(fresh)).toEqual({ enabled: false, revision: 1, users: [], roles: [] });
    expect(readEtcdAuthBuckets([], [], [])).toEqual({ enabled: false, revision: 1, users: [], roles: [] });
    expect(readEtcdAuthBuckets([[b('authEnabled'), Buffer.from([0])]], [], []).enabled).toBe(false);
  });

  it('refuses records etcd could not have written, naming them', () => {
    const good = etcdAuthBuckets(state().snapshot());
    const users = (replace: Entry): Entry[] => [...good.authUsers.filter(([k]) => !k.equals(replace[0])), replace].sort((x, y) => Buffer.compare(x[0], y[0]));
    const withUsers = (u: Entry[]): (() => unknown) => () => read({ ...good, authUsers: u });
    const withRoles = (r: Entry[]): (() => unknown) => () => read({ ...good, authRoles: r });
    const withAuth = (a: Entry[]): (() => unknown) => () => read({ ...good, auth: a });
    expect(refusal(withUsers(users([b('root'), Buffer.from([0x0a, 0x09, 0x72])])))).toBe('authUsers "root": not a protobuf message (truncated, or a wire type etcd does not use)');
    expect(refusal(withUsers(users([b('root'), Buffer.from([0x08, 0x01])])))).toBe('authUsers "root": field 1 has wire type 0, not 2');
    expect(refusal(withUsers(users([b('root'), Buffer.from([0x0a, 0x01, 0x78])])))).toBe('authUsers "root": the record\'s name is "x"');
    expect(refusal(withUsers(users([b('root'), Buffer.concat([Buffer.from([0x0a, 0x04]), b('root'), Buffer.from([0x12, 0x02, 0x70, 0x77])])])))).toBe('authUsers "root": the password is not a bcrypt hash');
    expect(refusal(withUsers(users([b('root'), Buffer.concat([Buffer.from([0x0a, 0x04]), b('root'), Buffer.from([0x22, 0x01, 0x08])])])))).toBe(
      'authUsers "root" options: not a protobuf message (truncated, or a wire type etcd does not use)',
    );
    expect(refusal(withUsers(users([b('root'), Buffer.concat([Buffer.from([0x0a, 0x04]), b('root'), Buffer.from([0x1a, 0x01, 0xff, 0x22, 0x02, 0x08, 0x01])])])))).toBe(
      'authUsers "root" role 0: not UTF-8 (ff)',
    );
    expect(refusal(withRoles([[b('r'), Buffer.from([0x0a, 0x01, 0x72, 0x12, 0x02, 0x08, 0x03])]]))).toBe('authRoles "r" permission 0: type 3 is not READ, WRITE or READWRITE');
    expect(refusal(withRoles([[b('r'), Buffer.from([0x0a, 0x00])]]))).toBe('authRoles "r": the record\'s name is ""');
    expect(refusal(withAuth([[b('authEnabled'), Buffer.from([2])]]))).toBe('auth authEnabled: 02 is neither 1 nor 0');
    expect(refusal(withAuth([[b('authRevision'), Buffer.alloc(4)]]))).toBe('auth authRevision: 4 bytes, not 8');
    expect(refusal(withAuth([[b('authRevision'), Buffer.from('ffffffffffffffff', 'hex')]]))).toBe('auth authRevision: 18446744073709551615 is beyond 2^53');
    // Enabled, but nobody could ever administer it: etcd refuses to get there.
    expect(refusal(withUsers(good.authUsers.filter(([k]) => !k.equals(b('root')))))).toBe('auth is enabled but there is no root user with the root role');
  });
});
