import { describe, expect, it } from 'vitest';
import { errorOf } from './error-of.js';
import { AuthState } from '../../../src/server/auth/auth-state.js';
import type { AuthInfo } from '../../../src/server/auth/auth-state.js';
import { RequestPerms } from '../../../src/server/auth/request-perms.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');


/** alice: readwrite on the prefix docs/, read on the key motd; lease 7 holds docs/a and secret. */
function setup(): { perms: RequestPerms; alice: AuthInfo; state: AuthState } {
  const state = new AuthState();
  for (const op of [
    { op: 'userAdd', name: 'root', password: 'h', noPassword: false },
    { op: 'userGrantRole', user: 'root', role: 'root' },
    { op: 'userAdd', name: 'alice', password: 'h', noPassword: false },
    { op: 'roleAdd', name: 'r' },
    { op: 'roleGrantPermission', name: 'r', perm: { permType: 'READWRITE', key: b('docs/'), rangeEnd: b('docs0') } },
    { op: 'roleGrantPermission', name: 'r', perm: { permType: 'READ', key: b('motd'), rangeEnd: b('') } },
    { op: 'userGrantRole', user: 'alice', role: 'r' },
    { op: 'enable' },
  ] as const) {
    state.apply(op);
  }
  const perms = new RequestPerms(state, (lease) => (lease === '7' ? [b('docs/a'), b('secret')] : []));
  return { perms, alice: { username: 'alice', revision: state.revision }, state };
}

describe("which permissions a request needs (etcd 3.4's auth applier)", () => {
  it('a put writes its key, reads it for prev_kv, and writes the keys of the lease it attaches', () => {
    const { perms, alice } = setup();
    expect(errorOf(() => perms.put(alice, { key: b('docs/x') }))).toBe('ok');
    expect(errorOf(() => perms.put(alice, { key: b('motd') }))).toBe('etcdserver: permission denied');
    expect(errorOf(() => perms.put(alice, { key: b('docs/x'), lease: '8' }))).toBe('ok');
    expect(errorOf(() => perms.put(alice, { key: b('docs/x'), lease: '7' }))).toBe('etcdserver: permission denied');
    expect(errorOf(() => perms.leasePuts(alice, '7'))).toBe('etcdserver: permission denied');
  });

  it('a delete writes its range and reads it for prev_kv', () => {
    const { perms, alice } = setup();
    expect(errorOf(() => perms.deleteRange(alice, { key: b('docs/'), rangeEnd: b('docs0'), prevKv: true }))).toBe('ok');
    expect(errorOf(() => perms.deleteRange(alice, { key: b('docs/'), rangeEnd: b('\0') }))).toBe('etcdserver: permission denied');
  });

  it('a txn needs read on every compare and what every op of both branches needs, nested too', () => {
    const { perms, alice } = setup();
    const cmp = (key: string) => ({ result: 'EQUAL', target: 'VALUE', key: b(key), value: b('v') }) as const;
    expect(errorOf(() => perms.txn(alice, { compare: [cmp('motd')], success: [{ requestPut: { key: b('docs/a') } }], failure: [{ requestRange: { key: b('motd') } }] }))).toBe('ok');
    expect(errorOf(() => perms.txn(alice, { compare: [cmp('secret')] }))).toBe('etcdserver: permission denied');
    expect(errorOf(() => perms.txn(alice, { failure: [{ requestPut: { key: b('motd') } }] }))).toBe('etcdserver: permission denied');
    expect(errorOf(() => perms.txn(alice, { success: [{ requestTxn: { success: [{ requestDeleteRange: { key: b('secret') } }] } }] }))).toBe('etcdserver: permission denied');
  });

  it('no user is "user name is empty", an old revision is refused, root may do anything', () => {
    const { perms, alice, state } = setup();
    expect(errorOf(() => perms.range(undefined, { key: b('motd') }))).toBe('etcdserver: user name is empty');
    state.apply({ op: 'roleAdd', name: 'other' });
    expect(errorOf(() => perms.range(alice, { key: b('motd') }))).toBe('etcdserver: revision of auth store is old');
    expect(errorOf(() => perms.range({ username: 'root', revision: state.revision }, { key: b('secret') }))).toBe('ok');
  });
});
