// Certificates made at run time with the openssl command, for members and clients that speak TLS: a CA,
// and certificates it signs for 127.0.0.1 and localhost, good for both server and client use (as etcd's
// peer certificates are), so one set serves a member's client port, its peer port and the clients.
// EC P-256 keys: fast to make, accepted by etcd, Node and etcdctl alike.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a TLS member or client is given: the CA to trust, and its own certificate and key. */
export interface TlsFiles {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

export interface CertificateAuthority {
  readonly caFile: string;
  readonly caKeyFile: string;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const DAYS = ['-days', '2'];

function openssl(dir: string, args: readonly string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A self-signed CA, `${name}.crt` and `${name}.key` in `dir`. */
export function makeCa(dir: string, name: string): CertificateAuthority {
  openssl(dir, ['req', '-x509', ...EC, '-keyout', `${name}.key`, '-out', `${name}.crt`, ...DAYS, '-subj', `/CN=${name}`]);
  return { caFile: join(dir, `${name}.crt`), caKeyFile: join(dir, `${name}.key`) };
}

/** A certificate `${name}.crt`/`${name}.key` in `dir`, signed by `ca`, for 127.0.0.1 and localhost. */
export function issueCert(dir: string, name: string, ca: CertificateAuthority): TlsFiles {
  openssl(dir, ['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', ca.caFile, '-CAkey', ca.caKeyFile, '-CAcreateserial', '-out', `${name}.crt`, ...DAYS, '-extfile', ext]);
  return { caFile: ca.caFile, certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
}

/** A CA `${name}-ca` and one certificate `${name}` it signs: the whole set for one TLS setup. */
export function makeTlsFiles(dir: string, name: string): TlsFiles {
  return issueCert(dir, name, makeCa(dir, `${name}-ca`));
}
