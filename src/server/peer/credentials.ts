// Peer URLs and peer TLS, with etcd's --peer-* flag semantics: one certificate serves as the member's
// server certificate and as its client certificate towards the other members.
import { readFile } from 'node:fs/promises';
import { credentials, ServerCredentials } from '@grpc/grpc-js';
import type { ChannelCredentials } from '@grpc/grpc-js';
import { PeerError } from './errors.js';

/** The --peer-cert-file, --peer-key-file, --peer-trusted-ca-file and --peer-client-cert-auth flags. */
export interface PeerTlsOptions {
  readonly certFile: string;
  readonly keyFile: string;
  /** CA that peers' certificates must chain to; without it the system's roots verify servers. */
  readonly trustedCaFile?: string;
  /** Require members that connect to present a certificate signed by trustedCaFile. */
  readonly clientCertAuth?: boolean;
}

export interface PeerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer | null;
  readonly clientCertAuth: boolean;
}

export interface PeerUrl {
  readonly url: string;
  readonly secure: boolean;
  /** host:port as grpc-js takes it (IPv6 in brackets). */
  readonly target: string;
  readonly hostname: string;
  readonly port: number;
}

export function parsePeerUrl(raw: string): PeerUrl {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new PeerError('PEER_CONFIG', `peer transport: bad peer URL ${JSON.stringify(raw)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new PeerError('PEER_CONFIG', `peer transport: URL scheme must be http or https: ${raw}`);
  }
  if (u.port === '' && !/:\d+$/.test(u.host)) {
    // etcd insists on an explicit port: a default of 80/443 for a peer URL is always a mistake.
    throw new PeerError('PEER_CONFIG', `peer transport: URL ${raw} needs a port`);
  }
  const port = Number(u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : u.port);
  return { url: raw, secure: u.protocol === 'https:', target: `${u.hostname}:${port}`, hostname: u.hostname, port };
}

export async function loadPeerTls(opts: PeerTlsOptions): Promise<PeerTls> {
  if (opts.clientCertAuth && !opts.trustedCaFile) {
    throw new PeerError('PEER_CONFIG', 'peer transport: --peer-client-cert-auth needs --peer-trusted-ca-file to verify peers');
  }
  const read = async (file: string, what: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (err) {
      throw new PeerError('PEER_CONFIG', `peer transport: cannot read ${what} ${file}: ${(err as Error).message}`);
    }
  };
  const [cert, key, ca] = await Promise.all([
    read(opts.certFile, '--peer-cert-file'),
    read(opts.keyFile, '--peer-key-file'),
    opts.trustedCaFile ? read(opts.trustedCaFile, '--peer-trusted-ca-file') : Promise.resolve(null),
  ]);
  return { cert, key, ca, clientCertAuth: opts.clientCertAuth ?? false };
}

export function serverCredentials(url: PeerUrl, tls: PeerTls | undefined): ServerCredentials {
  if (!url.secure) return ServerCredentials.createInsecure();
  if (!tls) {
    throw new PeerError('PEER_CONFIG', `peer transport: listen URL ${url.url} is https but --peer-cert-file/--peer-key-file are not set`);
  }
  return ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], tls.clientCertAuth);
}

export function channelCredentials(url: PeerUrl, tls: PeerTls | undefined): ChannelCredentials {
  if (!url.secure) return credentials.createInsecure();
  return tls ? credentials.createSsl(tls.ca, tls.key, tls.cert) : credentials.createSsl();
}
