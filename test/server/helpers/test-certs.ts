// Certificates made at test time with the openssl command: a CA and a peer certificate it signs (valid
// for 127.0.0.1 and localhost, for both server and client use, as etcd's peer certificates are).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PeerCert {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Makes `${name}-ca.crt` and a peer certificate `${name}.crt`/`${name}.key` signed by it, in `dir`. */
export function makePeerCert(dir: string, name: string): PeerCert {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(dir, ['req', '-x509', ...ec, '-keyout', `${name}-ca.key`, '-out', `${name}-ca.crt`, '-days', '2', '-subj', `/CN=${name}-ca`]);
  openssl(dir, ['req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${name}-ca.crt`, '-CAkey', `${name}-ca.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', ext]);
  return { caFile: join(dir, `${name}-ca.crt`), certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
}
