// `setpoint apiserver` as a process (dist/, so run `npm run build` first) on a real etcd 3.4: bad flags
// are one line and exit 2; it makes its certificates in --cert-dir and keeps them across restarts; it is
// ready while the store answers and not when it stops answering; SIGTERM stops it with exit 0.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/harness/free-port.js';
import { issueClientCert, type KeyPair } from '../../src/apiserver/pki/certificates.js';
import { startReferenceEtcd, type ReferenceEtcd } from '../server/helpers/etcd-reference.js';
import { waitFor } from '../server/helpers/client-port-harness.js';

const MAIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

interface Proc {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

function start(args: readonly string[], command = 'apiserver'): Proc {
  let output = '';
  const child = spawn(process.execPath, [MAIN, command, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SETPOINT_LOG_FORMAT: 'json' } });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function stop(p: Proc | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGKILL');
  await p.exited;
}

function get(port: number, path: string, ca: string, cert?: KeyPair): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port, path, ca, agent: false, ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

describe('setpoint apiserver', () => {
  it.each([
    [['--secure-port', 'abc', '--etcd-servers', 'http://127.0.0.1:1'], 'setpoint apiserver: invalid argument "abc" for "--secure-port" flag: must be an integer from 0 to 65535'],
    [[], 'setpoint apiserver: --etcd-servers must be specified'],
    [['--etcd-servers', 'http://127.0.0.1:1', '--request-timeout', '1'], 'setpoint apiserver: invalid argument "1" for "--request-timeout" flag: time: missing unit in duration "1"'],
    [['--no-such-flag'], "error: unknown option '--no-such-flag'"],
  ])('%j: one line, exit 2', async (args, line) => {
    const p = start(args);
    expect(await p.exited).toBe(2);
    expect(p.output().trim()).toBe(line);
  });

  describe('on a real etcd', () => {
    let etcd: ReferenceEtcd;
    let dir: string;
    let proc: Proc | undefined;
    beforeAll(async () => {
      etcd = await startReferenceEtcd();
      dir = mkdtempSync(join(tmpdir(), 'setpoint-apiserver-cmd-'));
    });
    afterAll(async () => {
      await stop(proc);
      await etcd?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    async function run(port: number, etcdEndpoint: string): Promise<Proc> {
      const p = start(['--etcd-servers', etcdEndpoint, '--secure-port', String(port), '--bind-address', '127.0.0.1', '--cert-dir', join(dir, 'pki'), '--log-level', 'debug']);
      await waitFor(async () => {
        if (p.child.exitCode !== null) throw new Error(`apiserver exited:\n${p.output()}`);
        return p.output().includes('serving securely');
      }, 'the API server to listen', 30_000);
      return p;
    }

    it('makes its certificates, answers as ready while the store answers, and keeps them across a restart', async () => {
      const port = await freePort();
      proc = await run(port, etcd.endpoint);
      const ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
      const caKey = readFileSync(join(dir, 'pki', 'ca.key'), 'utf8');
      expect(statSync(join(dir, 'pki', 'ca.key')).mode & 0o777).toBe(0o600);
      expect(proc.output()).toContain('made a cluster CA');
      await waitFor(async () => (await get(port, '/readyz', ca)).status === 200, '/readyz to pass', 30_000);
      expect((await get(port, '/readyz?verbose', ca)).body).toBe('[+]ping ok\n[+]etcd ok\n[+]watch-cache ok\n[+]system-namespaces ok\n[+]shutdown ok\nreadyz check passed\n');
      expect(JSON.parse((await get(port, '/version', ca)).body)).toMatchObject({ minor: '32' });
      // The generated CA authenticates clients: an admin certificate from it reads discovery.
      const admin = await issueClientCert({ certPem: ca, keyPem: caKey }, { user: 'admin', groups: ['system:masters'] });
      expect((await get(port, '/api', ca)).status).toBe(401);
      expect((await get(port, '/api', ca, admin)).status).toBe(200);

      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);

      proc = await run(port, etcd.endpoint);
      expect(readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8')).toBe(ca);
      expect(proc.output()).not.toContain('made a cluster CA');
      expect(proc.output()).not.toContain('issued a serving certificate');
      await waitFor(async () => (await get(port, '/readyz', ca)).status === 200, '/readyz to pass again', 30_000);
    });

    it('is not ready while the store does not answer', async () => {
      await stop(proc);
      const port = await freePort();
      const nowhere = `http://127.0.0.1:${await freePort()}`;
      proc = await run(port, nowhere);
      const ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
      const r = await get(port, '/readyz', ca);
      expect(r.status).toBe(500);
      expect(r.body).toBe('[+]ping ok\n[-]etcd failed: reason withheld\n[-]watch-cache failed: reason withheld\n[-]system-namespaces failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n');
      expect((await get(port, '/livez/ping', ca)).status).toBe(200);
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    });
  });

  it('is ready on a Setpoint store as on etcd', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'setpoint-apiserver-store-'));
    const client = `http://127.0.0.1:${await freePort()}`;
    const peer = `http://127.0.0.1:${await freePort()}`;
    let store: Proc | undefined;
    let api: Proc | undefined;
    try {
      store = start(['--name', 's1', '--data-dir', join(dir, 'data'), '--listen-client-urls', client, '--advertise-client-urls', client, '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer], 'store');
      const port = await freePort();
      api = start(['--etcd-servers', client, '--secure-port', String(port), '--bind-address', '127.0.0.1', '--cert-dir', join(dir, 'pki')]);
      await waitFor(() => api?.output().includes('serving securely') ?? false, 'the API server to listen', 30_000);
      const ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
      await waitFor(async () => (await get(port, '/readyz', ca)).status === 200, '/readyz to pass on the Setpoint store', 30_000);
      expect((await get(port, '/readyz/etcd', ca)).body).toBe('ok');
    } finally {
      await stop(api);
      await stop(store);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
