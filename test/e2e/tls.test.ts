// A three-member store with TLS everywhere, started with etcd's TLS flags: clients and peers both need
// certificates signed by the cluster's CA (--client-cert-auth, --peer-client-cert-auth). Certificates are
// made with openssl at run time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

function makeCerts(dir: string): void {
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  };
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=setpoint-test-ca');
  writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  for (const name of ['member', 'client']) {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', 'san.cnf');
  }
}

describe('TLS for clients and peers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'setpoint-tls-'));
  const procs: ChildProcess[] = [];
  let endpoints = '';

  const ctl = (args: string[], withCert = true): { ok: boolean; out: string } => {
    const certArgs = withCert ? ['--cacert', join(dir, 'ca.crt'), '--cert', join(dir, 'client.crt'), '--key', join(dir, 'client.key')] : ['--cacert', join(dir, 'ca.crt')];
    try {
      // Without a certificate the handshake fails and etcdctl retries until its command timeout: keep it short.
      const out = execFileSync('etcdctl', [`--endpoints=${endpoints}`, '--dial-timeout=5s', `--command-timeout=${withCert ? 20 : 4}s`, ...certArgs, ...args], { env: { ...process.env, ETCDCTL_API: '3' }, stdio: 'pipe' }).toString();
      return { ok: true, out };
    } catch (e) {
      const err = e as { stdout?: Buffer; stderr?: Buffer };
      return { ok: false, out: `${err.stdout?.toString() ?? ''}${err.stderr?.toString() ?? ''}` };
    }
  };

  beforeAll(async () => {
    makeCerts(dir);
    const members = await Promise.all(['a', 'b', 'c'].map(async (name) => ({ name, client: await freePort(), peer: await freePort() })));
    const cluster = members.map((m) => `${m.name}=https://127.0.0.1:${m.peer}`).join(',');
    endpoints = members.map((m) => `https://127.0.0.1:${m.client}`).join(',');
    for (const m of members) {
      const p = spawn(
        process.execPath,
        [
          MAIN, 'store',
          '--name', m.name,
          '--data-dir', join(dir, m.name),
          '--listen-client-urls', `https://127.0.0.1:${m.client}`,
          '--advertise-client-urls', `https://127.0.0.1:${m.client}`,
          '--listen-peer-urls', `https://127.0.0.1:${m.peer}`,
          '--initial-advertise-peer-urls', `https://127.0.0.1:${m.peer}`,
          '--initial-cluster', cluster,
          '--cert-file', join(dir, 'member.crt'), '--key-file', join(dir, 'member.key'), '--trusted-ca-file', join(dir, 'ca.crt'), '--client-cert-auth',
          '--peer-cert-file', join(dir, 'member.crt'), '--peer-key-file', join(dir, 'member.key'), '--peer-trusted-ca-file', join(dir, 'ca.crt'), '--peer-client-cert-auth',
        ],
        { stdio: ['ignore', 'ignore', 'ignore'], env: { ...process.env, SETPOINT_LOG_FORMAT: 'json', NODE_NO_WARNINGS: '1' } },
      );
      procs.push(p);
    }
    // Wait until the cluster answers a linearizable write (a leader exists and peers talk over TLS).
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (ctl(['put', 'ready', 'yes']).ok) break;
      if (Date.now() > deadline) throw new Error('TLS cluster did not come up within 60 s');
      await new Promise((r) => setTimeout(r, 250));
    }
  }, 90_000);

  afterAll(() => {
    for (const p of procs) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves etcdctl with a client certificate, and every member agrees', () => {
    expect(ctl(['put', 'k', 'v']).out.trim()).toBe('OK');
    expect(ctl(['get', 'k', '--print-value-only']).out.trim()).toBe('v');
    const list = ctl(['member', 'list']).out.trim().split('\n');
    expect(list).toHaveLength(3);
    for (const line of list) expect(line).toMatch(/, started, [abc], https:\/\/127\.0\.0\.1:\d+, https:\/\/127\.0\.0\.1:\d+, false$/);
    const hashes = new Set(ctl(['endpoint', 'hashkv', '--cluster']).out.trim().split('\n').map((l) => l.split(', ')[1]));
    expect(hashes.size).toBe(1);
  });

  it('refuses a client without a certificate', () => {
    const r = ctl(['get', 'k'], false);
    expect(r.ok).toBe(false);
  });
});
