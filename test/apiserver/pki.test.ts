// The API server's own certificates: a cluster CA and serving certificate made on first start in
// --cert-dir and kept (keys 0600, written atomically, one CA even when several servers start on the
// directory at once), reissued only when they no longer fit; client certificates whose CN and O are
// what the x509 authenticator reads; and a kubeconfig that carries them.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CERT_DIR_FILES, prepareCertDir } from '../../src/apiserver/pki/cert-dir.js';
import { CertificateError, coversSans, createCa, isIssuedBy, issueClientCert, issueServingCert } from '../../src/apiserver/pki/certificates.js';
import { renderKubeconfig } from '../../src/apiserver/pki/kubeconfig.js';
import { servingSans } from '../../src/apiserver/pki/serving-sans.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'setpoint-pki-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const mode = (p: string): number => statSync(p).mode & 0o777;
const read = (dir: string, f: string): string => readFileSync(join(dir, f), 'utf8');

describe('--cert-dir', () => {
  const sans = servingSans({ bindAddress: '0.0.0.0', advertiseAddress: '10.1.2.3' });

  it('makes a CA and a serving certificate on first start, keys 0600, covering every name clients dial', async () => {
    const dir = join(tempDir(), 'pki');
    const r = await prepareCertDir(dir, sans);
    expect(r.createdCa).toBe(true);
    expect(r.issuedServing).toBe(true);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, CERT_DIR_FILES.caKey))).toBe(0o600);
    expect(mode(join(dir, CERT_DIR_FILES.servingKey))).toBe(0o600);
    expect(mode(join(dir, CERT_DIR_FILES.caCert))).toBe(0o644);
    expect(existsSync(join(dir, '.lock'))).toBe(false);
    const ca = new X509Certificate(read(dir, CERT_DIR_FILES.caCert));
    expect(ca.ca).toBe(true);
    const serving = new X509Certificate(read(dir, CERT_DIR_FILES.servingCert));
    expect(serving.verify(ca.publicKey)).toBe(true);
    expect(serving.ca).toBe(false);
    for (const name of ['localhost', hostname(), 'kubernetes.default.svc']) expect(serving.checkHost(name)).toBe(name);
    for (const ip of ['127.0.0.1', '::1', '10.1.2.3']) expect(serving.checkIP(ip)).toBe(ip);
    expect(serving.keyUsage).toContain('1.3.6.1.5.5.7.3.1'); // serverAuth
  });

  it('a second start reuses both, byte for byte', async () => {
    const dir = tempDir();
    await prepareCertDir(dir, sans);
    const before = [CERT_DIR_FILES.caCert, CERT_DIR_FILES.caKey, CERT_DIR_FILES.servingCert, CERT_DIR_FILES.servingKey].map((f) => read(dir, f));
    const again = await prepareCertDir(dir, sans);
    expect(again.createdCa).toBe(false);
    expect(again.issuedServing).toBe(false);
    const after = [CERT_DIR_FILES.caCert, CERT_DIR_FILES.caKey, CERT_DIR_FILES.servingCert, CERT_DIR_FILES.servingKey].map((f) => read(dir, f));
    expect(after).toEqual(before);
  });

  it('reissues only the serving certificate when it lacks a new address, or was signed by another CA', async () => {
    const dir = tempDir();
    await prepareCertDir(dir, sans);
    const caPem = read(dir, CERT_DIR_FILES.caCert);
    const moved = await prepareCertDir(dir, [...sans, '10.9.9.9']);
    expect(moved.createdCa).toBe(false);
    expect(moved.issuedServing).toBe(true);
    expect(read(dir, CERT_DIR_FILES.caCert)).toBe(caPem);
    expect(coversSans(read(dir, CERT_DIR_FILES.servingCert), ['10.9.9.9', '10.1.2.3'])).toBe(true);

    const stranger = await issueServingCert(await createCa('someone-else'), sans);
    writeFileSync(join(dir, CERT_DIR_FILES.servingCert), stranger.certPem);
    writeFileSync(join(dir, CERT_DIR_FILES.servingKey), stranger.keyPem);
    const fixed = await prepareCertDir(dir, sans);
    expect(fixed.issuedServing).toBe(true);
    expect(new X509Certificate(read(dir, CERT_DIR_FILES.servingCert)).verify(new X509Certificate(caPem).publicKey)).toBe(true);
  });

  it('reissues a serving certificate near its expiry', async () => {
    const dir = tempDir();
    const { ca } = await prepareCertDir(dir, sans);
    const old = await issueServingCert(ca, sans, Date.now() - 350 * 86_400_000);
    expect(isIssuedBy(old, ca, 30 * 86_400_000)).toBe(false);
    writeFileSync(join(dir, CERT_DIR_FILES.servingCert), old.certPem);
    writeFileSync(join(dir, CERT_DIR_FILES.servingKey), old.keyPem);
    expect((await prepareCertDir(dir, sans)).issuedServing).toBe(true);
  });

  it('servers starting on one directory at once agree on one CA', async () => {
    const dir = tempDir();
    const results = await Promise.all([1, 2, 3, 4].map(() => prepareCertDir(dir, sans)));
    expect(results.filter((r) => r.createdCa)).toHaveLength(1);
    expect(new Set(results.map((r) => r.ca.certPem)).size).toBe(1);
    expect(new Set(results.map((r) => r.serving?.certPem)).size).toBe(1);
  });

  it('takes over a lock left by a process that died', async () => {
    const dir = tempDir();
    // A pid no process has (above the kernel's pid_max).
    writeFileSync(join(dir, '.lock'), '4194305');
    const r = await prepareCertDir(dir, sans);
    expect(r.createdCa).toBe(true);
  });

  it('refuses a CA certificate without its key instead of making a new CA beside it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, CERT_DIR_FILES.caCert), (await createCa()).certPem);
    await expect(prepareCertDir(dir, sans)).rejects.toThrow(/has only one of ca.crt and ca.key/);
  });
});

describe('client certificates', () => {
  it('CN is the user and each O a group, signed by the CA for client auth', async () => {
    const ca = await createCa();
    const pair = await issueClientCert(ca, { user: 'system:node:n1', groups: ['system:nodes', 'dev,ops'] });
    const cert = new X509Certificate(pair.certPem);
    expect(cert.subject.split('\n')).toEqual(['CN=system:node:n1', 'O=system:nodes', 'O=dev\\,ops']);
    expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']); // clientAuth only
    expect(isIssuedBy(pair, ca, 0)).toBe(true);
    expect(isIssuedBy(pair, await createCa(), 0)).toBe(false);
  });

  it('refuses a name the subject encoding would change', async () => {
    const ca = await createCa();
    await expect(issueClientCert(ca, { user: 'a, "b"' })).rejects.toThrow(CertificateError);
    await expect(issueClientCert(ca, { user: '' })).rejects.toThrow('needs a user name');
  });

  it('a kubeconfig carries the CA and the client certificate inline', async () => {
    const ca = await createCa();
    const admin = await issueClientCert(ca, { user: 'admin', groups: ['system:masters'] });
    const kc = parse(renderKubeconfig({ server: 'https://127.0.0.1:6443', caPem: ca.certPem, userName: 'admin', clientCertPem: admin.certPem, clientKeyPem: admin.keyPem })) as {
      clusters: { cluster: Record<string, string> }[];
      users: { name: string; user: Record<string, string> }[];
      'current-context': string;
    };
    expect(kc['current-context']).toBe('setpoint');
    expect(kc.clusters[0]?.cluster.server).toBe('https://127.0.0.1:6443');
    expect(Buffer.from(kc.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString()).toBe(ca.certPem);
    expect(Buffer.from(kc.users[0]?.user['client-key-data'] ?? '', 'base64').toString()).toBe(admin.keyPem);
  });
});
