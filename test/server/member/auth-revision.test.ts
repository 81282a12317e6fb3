// The auth revision at apply, on a real member (in this process, its own ports and data dir): a write
// carries the auth revision its caller was checked at, and applying it refuses it with etcd's
// ErrAuthOldRevision when an auth change was applied before it, as etcd's apply does with the request
// header's auth_revision. Deterministic: the auth change and the write are proposed in the same turn of
// the event loop (the change first), so the write is in the log, proposed at the old revision, behind the
// change when it applies.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../../src/harness/free-port.js';
import { waitFor } from '../../../src/harness/wait.js';
import { startMember } from '../../../src/server/embed/start-member.js';
import type { RunningMember } from '../../../src/server/embed/start-member.js';
import { parseStoreFlags } from '../../../src/server/embed/store-flags.js';
import type { AuthInfo } from '../../../src/server/auth/auth-state.js';

const b = (s: string): Buffer => Buffer.from(s);

async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

describe('the auth revision at apply', () => {
  const dir = mkdtempSync(join(tmpdir(), 'setpoint-authrev-'));
  let running: RunningMember | undefined;
  /** Root's token, and root as it named it then (admin checks take no revision). */
  let rootToken: string;
  let root: AuthInfo;

  const m = (): RunningMember['member'] => {
    if (!running) throw new Error('member not started');
    return running.member;
  };
  /** Alice, as a fresh token names her now. */
  const alice = async (): Promise<AuthInfo> => {
    const { token } = await m().auth.authenticate('alice', 'alicepw');
    return (await m().auth.who(token)) as AuthInfo;
  };
  const value = async (key: string): Promise<string | undefined> => {
    const r = await m().range({ key: b(key) }, { auth: await m().auth.who(rootToken) });
    return r.kvs[0] ? Buffer.from(r.kvs[0].value).toString() : undefined;
  };

  beforeAll(async () => {
    const p = await freePorts(['client', 'peer']);
    const flags = parseStoreFlags({
      name: 'a',
      'data-dir': join(dir, 'a'),
      'listen-client-urls': `http://127.0.0.1:${p.client}`,
      'advertise-client-urls': `http://127.0.0.1:${p.client}`,
      'listen-peer-urls': `http://127.0.0.1:${p.peer}`,
      'initial-advertise-peer-urls': `http://127.0.0.1:${p.peer}`,
      'bcrypt-cost': '4',
    });
    running = await startMember(flags, pino({ level: 'silent' }));
    await waitFor('a leader', async () => (await m().status()).leader !== '0');
    const a = m().auth;
    await a.userAdd(undefined, 'root', 'rootpw', false);
    await a.userGrantRole(undefined, 'root', 'root');
    await a.userAdd(undefined, 'alice', 'alicepw', false);
    await a.roleAdd(undefined, 'w');
    await a.roleGrantPermission(undefined, 'w', { permType: 'READWRITE', key: b('k'), rangeEnd: b('') });
    await a.userGrantRole(undefined, 'alice', 'w');
    await a.enable(undefined);
    rootToken = (await a.authenticate('root', 'rootpw')).token;
    root = (await a.who(rootToken)) as AuthInfo;
  }, 30_000);

  afterAll(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a write whose permission was revoked between its proposal and its apply', async () => {
    const before = await alice();
    await m().put({ key: b('k'), value: b('1') }, { auth: before });
    const revoke = m().auth.roleRevokePermission(root, 'w', b('k'), b(''));
    const write = m().put({ key: b('k'), value: b('2') }, { auth: before });
    expect(await errorOf(revoke)).toBe('ok');
    expect(await errorOf(write)).toBe('etcdserver: revision of auth store is old');
    expect(await value('k')).toBe('1');
    // Asked again, with the revision of now: the permission is gone.
    expect(await errorOf(m().put({ key: b('k'), value: b('3') }, { auth: await alice() }))).toBe('etcdserver: permission denied');
  });

  it('refuses a write behind any auth change, even one that grants, and takes it at the new revision', async () => {
    await m().auth.roleGrantPermission(root, 'w', { permType: 'READWRITE', key: b('k'), rangeEnd: b('') });
    const before = await alice();
    const grant = m().auth.roleAdd(root, 'other');
    const write = m().txn({ success: [{ requestPut: { key: b('k'), value: b('4') } }] }, { auth: before });
    const del = m().deleteRange({ key: b('k') }, { auth: before });
    expect(await errorOf(grant)).toBe('ok');
    expect(await errorOf(write)).toBe('etcdserver: revision of auth store is old');
    expect(await errorOf(del)).toBe('etcdserver: revision of auth store is old');
    expect(await value('k')).toBe('1');
    expect(await errorOf(m().put({ key: b('k'), value: b('5') }, { auth: await alice() }))).toBe('ok');
    expect(await value('k')).toBe('5');
  });

  it('applies a write proposed at the current revision ahead of a later change', async () => {
    const now = await alice();
    const write = m().put({ key: b('k'), value: b('6') }, { auth: now });
    const revoke = m().auth.roleRevokePermission(root, 'w', b('k'), b(''));
    expect(await errorOf(write)).toBe('ok');
    expect(await errorOf(revoke)).toBe('ok');
    expect(await value('k')).toBe('6');
  });
});
