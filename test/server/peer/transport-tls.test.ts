// Peer TLS with etcd's --peer-* semantics, on certificates openssl makes for the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Harness, heartbeat, waitFor } from '../helpers/peer-harness.js';
import { makeTlsFiles } from '../../../src/harness/tls-files.js';
import type { TlsFiles } from '../../../src/harness/tls-files.js';

const h = new Harness();
let dir = '';
let good: TlsFiles;
let rogue: TlsFiles;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'setpoint-peer-tls-'));
  good = makeTlsFiles(dir, 'member');
  // Same names and usages, another CA: what a member of another deployment would present.
  rogue = makeTlsFiles(dir, 'rogue');
});
afterEach(() => h.closeAll());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tlsOf = (c: TlsFiles, clientCertAuth = true) => ({ certFile: c.certFile, keyFile: c.keyFile, trustedCaFile: c.caFile, clientCertAuth });
const https = ['https://127.0.0.1:0'];

describe('peer transport: TLS', () => {
  it('exchanges messages and lease calls between members with certificates from the trusted CA', async () => {
    const [a, b] = await h.pair({ listenUrls: https, tls: tlsOf(good) });
    expect(a.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    b.member.keepAlive = () => Promise.resolve({ ttl: 9 });
    a.transport.send([heartbeat(1n, 2n, 1)]);
    b.transport.send([heartbeat(2n, 1n, 1)]);
    await waitFor(() => a.member.received.length === 1 && b.member.received.length === 1, 'one message each way');
    await expect(a.transport.leaseKeepAlive(2n, '5')).resolves.toEqual({ ttl: 9 });
    expect(a.member.unreachable).toEqual([]);
  });

  it('refuses a client whose certificate another CA signed', async () => {
    const server = await h.node(2n, { listenUrls: https, tls: tlsOf(good) });
    // The rogue trusts the server's CA (so the server looks fine to it) but presents its own certificate.
    const intruder = await h.node(1n, { listenUrls: https, tls: { certFile: rogue.certFile, keyFile: rogue.keyFile, trustedCaFile: good.caFile } });
    intruder.transport.addPeer(2n, [server.url]);
    intruder.transport.send([heartbeat(1n, 2n, 1)]);
    await waitFor(() => (intruder.transport.stats().outbound.get(2n)?.failures ?? 0) >= 2, 'two failed attempts');
    expect(intruder.member.unreachable).toContain(2n);
    await expect(intruder.transport.leaseKeepAlive(2n, '1')).rejects.toMatchObject({ code: 'PEER_UNREACHABLE' });
    expect(server.member.received).toEqual([]);
  });

  it('verifies the client certificate only with --peer-client-cert-auth', async () => {
    const open = await h.node(2n, { listenUrls: https, tls: tlsOf(good, false) });
    const strict = await h.node(3n, { listenUrls: https, tls: tlsOf(good, true) });
    // Trusts the servers' CA; its own certificate is one they cannot verify.
    const client = await h.node(1n, { listenUrls: https, tls: { certFile: rogue.certFile, keyFile: rogue.keyFile, trustedCaFile: good.caFile } });
    client.transport.addPeer(2n, [open.url]);
    client.transport.addPeer(3n, [strict.url]);
    client.transport.send([heartbeat(1n, 2n, 1), heartbeat(1n, 3n, 1)]);
    await waitFor(() => open.member.received.length === 1, 'message at the server without client-cert auth');
    await waitFor(() => (client.transport.stats().outbound.get(3n)?.failures ?? 0) >= 1, 'refused by the strict server');
    expect(strict.member.received).toEqual([]);
  });

  it('fails a plain-text member dialling a TLS one, and the other way round', async () => {
    const secure = await h.node(2n, { listenUrls: https, tls: tlsOf(good) });
    const plain = await h.node(1n);
    plain.transport.addPeer(2n, [secure.url.replace('https:', 'http:')]);
    secure.transport.addPeer(1n, [plain.url.replace('http:', 'https:')]);
    plain.transport.send([heartbeat(1n, 2n, 1)]);
    secure.transport.send([heartbeat(2n, 1n, 1)]);
    await waitFor(() => plain.member.unreachable.includes(2n) && secure.member.unreachable.includes(1n), 'both report the other unreachable');
    expect(plain.member.received).toEqual([]);
    expect(secure.member.received).toEqual([]);
  });

  it('rejects TLS settings that cannot work', async () => {
    await expect(h.node(1n, { listenUrls: https })).rejects.toMatchObject({ code: 'PEER_CONFIG', message: expect.stringContaining('--peer-cert-file') });
    await expect(h.node(1n, { listenUrls: https, tls: { certFile: good.certFile, keyFile: good.keyFile, clientCertAuth: true } })).rejects.toMatchObject({
      code: 'PEER_CONFIG',
      message: expect.stringContaining('--peer-trusted-ca-file'),
    });
    await expect(h.node(1n, { listenUrls: https, tls: { certFile: join(dir, 'missing.crt'), keyFile: good.keyFile } })).rejects.toMatchObject({ code: 'PEER_CONFIG' });
    await expect(h.node(1n, { listenUrls: ['ftp://127.0.0.1:0'] })).rejects.toMatchObject({ code: 'PEER_CONFIG' });
  });
});
