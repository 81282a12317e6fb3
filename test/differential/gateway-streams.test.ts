// The JSON gateway's streams beyond watch and keep-alive, side by side with a one-member etcd 3.4: the
// snapshot as grpc-gateway streams it (a {"result":…} line per message, the blob in base64, the sha256
// last), whose bytes `etcdctl snapshot status` reads and `etcdctl snapshot restore` turns into a data
// directory a real etcd serves; the websocket proxy etcd wraps around the gateway (Node's own websocket
// client runs test/differential/gateway/ws-session.ts on both), and what one hostile websocket costs;
// h2c requests that are not gRPC.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { promisify } from 'node:util';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBoth } from '../../src/harness/store-cluster.js';
import type { StoreCluster } from '../../src/harness/store-cluster.js';
import { etcdctl } from '../../src/harness/etcdctl.js';
import { startReferenceEtcdOn } from '../server/helpers/etcd-reference.js';
import type { ReferenceEtcd } from '../server/helpers/etcd-reference.js';
import { suiteClusters } from '../helpers/suite-clusters.js';

const here = dirname(fileURLToPath(import.meta.url));
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** Revisions, ids and terms aside. */
function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (v === null || typeof v !== 'object') return v;
  const skip = ['cluster_id', 'member_id', 'raft_term', 'revision', 'create_revision', 'mod_revision', 'version'];
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([k]) => !skip.includes(k)).map(([k, x]) => [k, strip(x)]));
}

/** A raw websocket handshake on `path`; resolves with the socket once the 101 is in. */
function rawWebsocket(base: string, path: string): Promise<Socket> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname, () => {
      sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${Buffer.alloc(16, 1).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    let head = '';
    const onData = (c: Buffer): void => {
      head += c.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      sock.off('data', onData);
      if (head.startsWith('HTTP/1.1 101')) resolve(sock);
      else reject(new Error(head));
    };
    sock.on('data', onData);
    sock.on('error', reject);
  });
}

/** Everything the server sends until it closes the connection. */
function untilClosed(sock: Socket): Promise<Buffer> {
  const got: Buffer[] = [];
  sock.on('data', (c: Buffer) => got.push(c));
  return new Promise((resolve) => sock.once('close', () => resolve(Buffer.concat(got))));
}

async function post(base: string, path: string, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(base + path, { method: 'POST', body });
  return { status: res.status, text: await res.text() };
}

interface SnapshotAnswer {
  /** What is the same on both: the status, the line shapes, where the sha256 is and that it matches. */
  readonly shape: unknown;
  readonly bytes: Buffer;
}

/** Takes a snapshot through the gateway, reading the response as it streams. */
async function snapshot(base: string): Promise<SnapshotAnswer> {
  const res = await fetch(base + '/v3/maintenance/snapshot', { method: 'POST', body: '{}' });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const blobs: Buffer[] = [];
  const keys = new Set<string>();
  let buf = '';
  let lines = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += Buffer.from(value).toString('utf8');
    let at: number;
    while ((at = buf.indexOf('\n')) >= 0) {
      const line = JSON.parse(buf.slice(0, at)) as Record<string, Record<string, string>>;
      buf = buf.slice(at + 1);
      lines++;
      for (const [k, v] of Object.entries(line)) for (const f of Object.keys(v)) keys.add(`${k}.${f}`);
      blobs.push(Buffer.from(line['result']?.['blob'] ?? '', 'base64'));
    }
  }
  const bytes = Buffer.concat(blobs);
  const db = bytes.subarray(0, bytes.length - 32);
  const sha = bytes.subarray(bytes.length - 32);
  return {
    shape: {
      status: res.status,
      type: res.headers.get('content-type'),
      // remaining_bytes counts differently (Setpoint does not know the total up front); it is there or not.
      fields: [...keys].filter((k) => k !== 'result.remaining_bytes').sort(),
      manyLines: lines > 2,
      trailing: buf,
      lastIsSha: blobs.at(-1)?.length === 32 && createHash('sha256').update(db).digest().equals(sha),
      aligned: db.length % 512 === 0,
    },
    bytes,
  };
}

describe('the JSON gateway streams as etcd 3.4 does', () => {
  const clusters = suiteClusters();
  let etcd: StoreCluster | undefined;
  let setpoint: StoreCluster | undefined;
  let restored: ReferenceEtcd | undefined;
  let dir = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'setpoint-gateway-streams-'));
    const both = await startBoth({ size: 1, token: 'gateway-streams', label: 'setpoint-gateway-streams-' });
    etcd = clusters.track(both.etcd);
    setpoint = clusters.track(both.setpoint);
  }, 60_000);

  afterAll(async () => {
    await restored?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('/v3/maintenance/snapshot: the same stream; its bytes restore into an etcd with the same keys', async () => {
    if (!etcd || !setpoint) throw new Error('clusters did not start');
    const theirs = etcd.endpoints()[0] as string;
    const ours = setpoint.endpoints()[0] as string;
    for (const base of [theirs, ours]) {
      // A value over one 32 KiB message, so the snapshot takes several.
      for (let i = 0; i < 5; i++) await post(base, '/v3/kv/put', JSON.stringify({ key: b64(`snap/${i}`), value: b64(String(i).repeat(20_000)) }));
      await post(base, '/v3/kv/deleterange', JSON.stringify({ key: b64('snap/4') }));
    }
    const [a, b] = await Promise.all([snapshot(theirs), snapshot(ours)]);
    expect(b.shape).toEqual(a.shape);
    expect(a.shape).toMatchObject({ status: 200, manyLines: true, lastIsSha: true });

    // The same request errors: malformed JSON, another method.
    for (const body of ['{"x":', '[1]']) expect(await post(ours, '/v3/maintenance/snapshot', body)).toEqual(await post(theirs, '/v3/maintenance/snapshot', body));
    const get = async (base: string): Promise<number> => (await fetch(base + '/v3/maintenance/snapshot')).status;
    expect(await get(ours)).toBe(await get(theirs));

    // Saved as etcdctl snapshot save saves it (the sha256 included), read back by etcdctl.
    const file = join(dir, 'gateway.db');
    await writeFile(file, b.bytes);
    const status = await etcdctl(ours, ['snapshot', 'status', file, '-w', 'json']);
    expect(status.code, status.stderr).toBe(0);
    const live = async (ep: string): Promise<unknown> => {
      const r = await etcdctl(ep, ['get', 'snap/', '--prefix', '-w', 'json']);
      const out = JSON.parse(r.stdout) as { header: { revision: number }; kvs: unknown[] };
      return { revision: out.header.revision, kvs: out.kvs };
    };
    const want = await live(theirs);
    expect((JSON.parse(status.stdout) as { revision: number }).revision).toBe((want as { revision: number }).revision);
    restored = await startReferenceEtcdOn(async (me) => {
      const dataDir = join(dir, 'restored');
      const r = await etcdctl(ours, ['snapshot', 'restore', file, '--name', me.name, '--initial-cluster', me.initialCluster, '--initial-advertise-peer-urls', me.peer, '--data-dir', dataDir]);
      expect(r.code, r.stderr).toBe(0);
      return dataDir;
    });
    expect(await live(restored.endpoint)).toEqual(want);
  }, 60_000);

  it('websocket on /v3/…: watch, unary calls, errors and refused upgrades answer as etcd 3.4 answers', async () => {
    if (!etcd || !setpoint) throw new Error('clusters did not start');
    const run = async (c: StoreCluster): Promise<unknown> => {
      // The session runs from dist/ (npm run build), as Node runs it: test/differential/gateway/ws-session.ts.
      const script = join(here, '..', '..', 'dist', 'test', 'differential', 'gateway', 'ws-session.js');
      const { stdout } = await promisify(execFile)(process.execPath, ['--no-warnings', '--experimental-websocket', script, c.endpoints()[0] as string], { timeout: 60_000 });
      return strip(JSON.parse(stdout));
    };
    const [theirs, ours] = await Promise.all([run(etcd), run(setpoint)]);
    expect(ours).toEqual(theirs);
    expect(JSON.stringify(ours)).toContain('"events"');
  }, 90_000);

  it('a request over h2c that is not gRPC is reset with PROTOCOL_ERROR, on a connection that stays usable', async () => {
    if (!etcd || !setpoint) throw new Error('clusters did not start');
    const curl = async (c: StoreCluster): Promise<unknown> => {
      const base = c.endpoints()[0] as string;
      // Two requests on one connection: each stream is reset, the connection is not.
      const r = await promisify(execFile)('curl', ['-sS', '--http2-prior-knowledge', '-XPOST', `${base}/v3/kv/range`, '-d', '{}', `${base}/health`], { timeout: 20_000 }).then(
        (o) => ({ code: 0, stderr: o.stderr }),
        (e: { code?: number; stderr?: string }) => ({ code: e.code, stderr: e.stderr }),
      );
      return r;
    };
    const theirs = await curl(etcd);
    expect(await curl(setpoint)).toEqual(theirs);
    expect(JSON.stringify(theirs)).toContain('PROTOCOL_ERROR');
    // An HTTP/1.1 request asking to upgrade to h2c is answered as the plain request it also is.
    const upgrade = async (c: StoreCluster): Promise<string> => {
      const base = c.endpoints()[0] as string;
      const o = await promisify(execFile)('curl', ['-sS', '--http2', '-XPOST', `${base}/v3/kv/range`, '-d', JSON.stringify({ key: b64('snap/0'), count_only: true })], { timeout: 20_000 });
      return JSON.stringify(strip(JSON.parse(o.stdout)));
    };
    expect(await upgrade(setpoint)).toBe(await upgrade(etcd));
  }, 30_000);

  it('a hostile websocket: a message declared over the limit is refused before it is sent; unmasked frames are a protocol error', async () => {
    if (!setpoint) throw new Error('cluster did not start');
    const base = setpoint.endpoints()[0] as string;
    // A text frame declaring 2^40 bytes: the close (1009) comes without any of them being sent.
    const big = await rawWebsocket(base, '/v3/watch');
    const bigClosed = untilClosed(big);
    const head = Buffer.alloc(14);
    head[0] = 0x81;
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(2n ** 40n, 2);
    big.write(head);
    expect([...(await bigClosed)]).toEqual([0x88, 2, 0x03, 0xf1]);
    // An unmasked frame from a client: 1002.
    const plain = await rawWebsocket(base, '/v3/watch');
    const plainClosed = untilClosed(plain);
    plain.write(Buffer.from([0x81, 2, 0x7b, 0x7d]));
    expect([...(await plainClosed)]).toEqual([0x88, 2, 0x03, 0xea]);
    // The member still serves.
    expect((await post(base, '/v3/kv/range', JSON.stringify({ key: b64('snap/0') }))).status).toBe(200);
  }, 30_000);

  // Last: it turns auth on.
  it('/v3/maintenance/snapshot with auth on: no token, and a user without the root role, refused as etcd refuses them', async () => {
    if (!etcd || !setpoint) throw new Error('clusters did not start');
    const refused = async (c: StoreCluster): Promise<unknown> => {
      const base = c.endpoints()[0] as string;
      for (const args of [['user', 'add', 'root:rootpw'], ['role', 'add', 'root'], ['user', 'grant-role', 'root', 'root'], ['user', 'add', 'bob:bobpw'], ['auth', 'enable']]) {
        const r = await etcdctl(base, args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      }
      const auth = await post(base, '/v3/auth/authenticate', JSON.stringify({ name: 'bob', password: 'bobpw' }));
      const token = (JSON.parse(auth.text) as { token: string }).token;
      const answer = async (headers: Record<string, string>): Promise<unknown> => {
        const res = await fetch(base + '/v3/maintenance/snapshot', { method: 'POST', body: '{}', headers });
        return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
      };
      return [await answer({}), await answer({ Authorization: token })];
    };
    const [theirs, ours] = await Promise.all([refused(etcd), refused(setpoint)]);
    expect(ours).toEqual(theirs);
  }, 60_000);
});
