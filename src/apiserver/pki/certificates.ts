// The cluster's certificates: a CA, the API server's serving certificate (SANs for every name clients
// use) and client certificates (CN = user, O = groups — what Kubernetes' x509 authenticator reads), all
// ECDSA P-256 with SHA-256, which kubectl, client-go, Node and OpenSSL all accept.
import './reflect-shim.js';
import * as x509 from '@peculiar/x509';
import { X509Certificate, createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;
/** Backdated so a peer whose clock is a little behind still accepts a certificate made just now. */
const BACKDATE_MS = 5 * 60_000;

export const CA_VALIDITY_DAYS = 3650;
export const LEAF_VALIDITY_DAYS = 365;

export class CertificateError extends Error {
  readonly code = 'CERTIFICATE_INVALID';

  constructor(message: string) {
    super(message);
    this.name = 'CertificateError';
  }
}

/** A certificate and its private key, both PEM (the key PKCS#8). */
export interface KeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`;
}

async function importSigningKey(pem: string): Promise<CryptoKey> {
  const der = createPrivateKey(pem).export({ type: 'pkcs8', format: 'der' });
  return webcrypto.subtle.importKey('pkcs8', der, ALG, false, ['sign']);
}

/** A positive 128-bit serial, random so two CAs' certificates never collide. */
function serial(): string {
  const b = randomBytes(16);
  b[0] = (b[0] ?? 0) & 0x7f;
  return b.toString('hex');
}

/**
 * A subject from a CN and O values. @peculiar/x509 re-parses values it is given, which mangles a few
 * characters (quotes); a name that would not come out as it went in is refused rather than issued wrong.
 */
function subject(cn: string, orgs: readonly string[]): x509.Name {
  const json: x509.JsonName = [{ CN: [cn] }, ...orgs.map((o) => ({ O: [o] }))];
  const name = new x509.Name(json);
  if (JSON.stringify(name.toJSON()) !== JSON.stringify(json)) {
    throw new CertificateError(`cannot put ${JSON.stringify([cn, ...orgs])} into a certificate subject`);
  }
  return name;
}

function validity(days: number, now: number): { notBefore: Date; notAfter: Date } {
  return { notBefore: new Date(now - BACKDATE_MS), notAfter: new Date(now + days * DAY_MS) };
}

export async function createCa(commonName = 'setpoint-ca', now = Date.now()): Promise<KeyPair> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: subject(commonName, []),
    ...validity(CA_VALIDITY_DAYS, now),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await keyPem(keys.privateKey) };
}

interface LeafSpec {
  readonly commonName: string;
  readonly organizations: readonly string[];
  readonly usage: 'server' | 'client';
  readonly sans?: readonly string[];
  readonly days: number;
  readonly now: number;
}

async function issue(ca: KeyPair, spec: LeafSpec): Promise<KeyPair> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const signingKey = await importSigningKey(ca.keyPem);
  const keys = await newKeys();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([spec.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
    await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
  ];
  if (spec.sans && spec.sans.length > 0) {
    extensions.push(new x509.SubjectAlternativeNameExtension(spec.sans.map((s) => (isIP(s) !== 0 ? { type: 'ip', value: s } : { type: 'dns', value: s }))));
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: subject(spec.commonName, spec.organizations),
    issuer: caCert.subject,
    ...validity(spec.days, spec.now),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey,
    extensions,
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await keyPem(keys.privateKey) };
}

/** The API server's serving certificate for these DNS names and IP addresses. */
export async function issueServingCert(ca: KeyPair, sans: readonly string[], now = Date.now()): Promise<KeyPair> {
  return issue(ca, { commonName: 'setpoint-apiserver', organizations: [], usage: 'server', sans: [...new Set(sans)], days: LEAF_VALIDITY_DAYS, now });
}

export interface ClientCertSpec {
  /** The user name (CN): `admin`, `system:node:<name>`. */
  readonly user: string;
  /** The groups (O): `system:masters`, `system:nodes`. */
  readonly groups?: readonly string[];
  readonly days?: number;
}

/** A client certificate the API server's x509 authenticator maps to `user` in `groups`. */
export async function issueClientCert(ca: KeyPair, spec: ClientCertSpec, now = Date.now()): Promise<KeyPair> {
  if (spec.user === '') throw new CertificateError('a client certificate needs a user name');
  return issue(ca, { commonName: spec.user, organizations: spec.groups ?? [], usage: 'client', days: spec.days ?? LEAF_VALIDITY_DAYS, now });
}

/** True when `pair` is a certificate signed by `ca`, with its own key, valid for another `marginMs`. */
export function isIssuedBy(pair: KeyPair, ca: KeyPair, marginMs: number, now = Date.now()): boolean {
  try {
    const cert = new X509Certificate(pair.certPem);
    const caCert = new X509Certificate(ca.certPem);
    if (!cert.verify(caCert.publicKey)) return false;
    if (!cert.checkPrivateKey(createPrivateKey(pair.keyPem))) return false;
    return Date.parse(cert.validTo) - now > marginMs && Date.parse(cert.validFrom) <= now;
  } catch {
    return false;
  }
}

/** True when the certificate covers every name and address in `sans`. */
export function coversSans(certPem: string, sans: readonly string[]): boolean {
  const cert = new X509Certificate(certPem);
  return sans.every((s) => (isIP(s) !== 0 ? cert.checkIP(s) !== undefined : cert.checkHost(s, { wildcards: false }) !== undefined));
}

/** A CA read back from PEM: its certificate must be a CA and match its key. */
export function checkCa(ca: KeyPair): void {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(ca.certPem);
  } catch (e) {
    throw new CertificateError(`the CA certificate does not parse: ${(e as Error).message}`);
  }
  if (!cert.ca) throw new CertificateError('the CA certificate is not a CA (basicConstraints CA:FALSE)');
  let ok: boolean;
  try {
    ok = cert.checkPrivateKey(createPrivateKey(ca.keyPem));
  } catch (e) {
    throw new CertificateError(`the CA key does not parse: ${(e as Error).message}`);
  }
  if (!ok) throw new CertificateError('the CA key does not belong to the CA certificate');
}
