// TLS on the client port with certificates made by openssl at test time: etcdctl, grpc-js and HTTPS
// clients with a certificate from the trusted CA get in; with --client-cert-auth (or a trusted CA file,
// which etcd treats the same) clients without one, or with one from another CA, are refused.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixturePort } from '../helpers/client-port-harness.js';
import type { FixturePort } from '../helpers/client-port-harness.js';
import { makeTlsFiles } from '../../../src/harness/tls-files.js';
import type { TlsFiles } from '../../../src/harness/tls-files.js';
import { errorLines, etcdctl } from '../../../src/harness/etcdctl.js';
import { EtcdGrpcClient, bytes } from '../helpers/grpc-client.js';

/** GET over HTTPS with an optional client certificate: the status, or the error's code. */
function httpsGet(url: string, ca: Buffer, client?: { cert: Buffer; key: Buffer }): Promise<{ status?: number; body?: string; alpn?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = https.get(url, { ca, ...(client ?? {}), agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
  });
}

describe('client port over TLS', () => {
  let dir: string;
  let server: TlsFiles;
  let rogue: TlsFiles;
  let ca: Buffer;
  let ctlFlags: string[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'setpoint-client-tls-'));
    // The server's certificate also serves as the trusted client certificate (it is made for both uses).
    server = makeTlsFiles(dir, 'server');
    rogue = makeTlsFiles(dir, 'rogue');
    ca = await readFile(server.caFile);
    ctlFlags = [`--cacert=${server.caFile}`, `--cert=${server.certFile}`, `--key=${server.keyFile}`];
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('with --client-cert-auth', () => {
    let fx: FixturePort | undefined;

    beforeAll(async () => {
      fx = await startFixturePort({
        listenUrls: ['https://127.0.0.1:0'],
        tls: { certFile: server.certFile, keyFile: server.keyFile, trustedCaFile: server.caFile, clientCertAuth: true },
      });
    });

    afterAll(async () => {
      await fx?.close();
    });

    it('reports an https address with the bound port', () => {
      expect(fx?.endpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(fx?.endpoint.endsWith(':0')).toBe(false);
    });

    it('serves etcdctl with a trusted client certificate, endpoint status included', async () => {
      const ep = fx?.endpoint ?? '';
      expect((await etcdctl(ep, ['put', 'tls', 'yes'], { flags: ctlFlags })).stdout).toBe('OK\n');
      expect((await etcdctl(ep, ['get', 'tls', '--print-value-only'], { flags: ctlFlags })).stdout).toBe('yes\n');
      const st = await etcdctl(ep, ['endpoint', 'status', '-w', 'json'], { flags: ctlFlags });
      expect(st.code).toBe(0);
      expect(st.stdout).toContain('"version":"3.4.23"');
    });

    it('refuses etcdctl without a client certificate, or with one from another CA', async () => {
      const quick = ['--dial-timeout=2s', '--command-timeout=3s'];
      const bare = await etcdctl(fx?.endpoint ?? '', ['get', 'tls'], { flags: [`--cacert=${server.caFile}`, ...quick] });
      expect(bare.code).not.toBe(0);
      expect(errorLines(bare.stderr).length).toBeGreaterThan(0);
      const wrong = await etcdctl(fx?.endpoint ?? '', ['get', 'tls'], {
        flags: [`--cacert=${server.caFile}`, `--cert=${rogue.certFile}`, `--key=${rogue.keyFile}`, ...quick],
      });
      expect(wrong.code).not.toBe(0);
    });

    it('serves grpc-js with a client certificate and refuses it without', async () => {
      const target = (fx?.endpoint ?? '').replace('https://', '');
      const [key, cert] = await Promise.all([readFile(server.keyFile), readFile(server.certFile)]);
      const good = new EtcdGrpcClient(target, credentials.createSsl(ca, key, cert));
      const bad = new EtcdGrpcClient(target, credentials.createSsl(ca), { 'grpc.initial_reconnect_backoff_ms': 100 });
      try {
        const r = await good.call<{ kvs: { value: Buffer }[] }>('KV', 'Range', { key: bytes('tls') });
        expect(r.kvs[0]?.value.toString()).toBe('yes');
        const err = await bad.call('KV', 'Range', { key: bytes('tls') }).then(
          () => undefined,
          (e: ServiceError) => e,
        );
        expect(err?.code).toBe(status.UNAVAILABLE);
      } finally {
        good.close();
        bad.close();
      }
    });

    it('serves /health over HTTPS (HTTP/1.1 chosen by ALPN) only to trusted clients', async () => {
      const [key, cert] = await Promise.all([readFile(server.keyFile), readFile(server.certFile)]);
      expect(await httpsGet(`${fx?.endpoint}/health`, ca, { key, cert })).toEqual({ status: 200, body: '{"health":"true"}' });
      expect((await httpsGet(`${fx?.endpoint}/health`, ca)).status).toBeUndefined();
    });
  });

  describe('with a certificate but no client authentication', () => {
    let fx: FixturePort | undefined;

    beforeAll(async () => {
      fx = await startFixturePort({ listenUrls: ['https://127.0.0.1:0', 'http://127.0.0.1:0'], tls: { certFile: server.certFile, keyFile: server.keyFile } });
    });

    afterAll(async () => {
      await fx?.close();
    });

    it('serves clients without certificates on https, and plaintext on the http URL', async () => {
      const [secure, plain] = fx?.port.addresses ?? [];
      expect(secure).toMatch(/^https:/);
      expect(plain).toMatch(/^http:/);
      expect((await etcdctl(secure ?? '', ['put', 'open', 'door'], { flags: [`--cacert=${server.caFile}`] })).stdout).toBe('OK\n');
      expect((await etcdctl(plain ?? '', ['get', 'open', '--print-value-only'])).stdout).toBe('door\n');
      expect((await httpsGet(`${secure}/health`, ca)).status).toBe(200);
    });
  });

  it('refuses https URLs without a certificate to serve', async () => {
    await expect(startFixturePort({ listenUrls: ['https://127.0.0.1:0'] })).rejects.toThrow(/need --cert-file/);
  });
});
