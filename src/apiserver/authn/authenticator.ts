// Who is asking, from what the request presents: a client certificate that chains to the client CA (CN is
// the user, each O a group) or a bearer token from --token-auth-file. As Kubernetes' union authenticator:
// the first method that succeeds wins; if some method was tried and none succeeded the request fails
// (401); if nothing was presented at all the request is anonymous, which only the health and version
// endpoints accept.
import { authenticatedUser, type UserInfo } from './user-info.js';

/** A client certificate as the TLS layer saw it. */
export interface PresentedCertificate {
  /** It chains to the client CA (OpenSSL verified it during the handshake). */
  readonly authorized: boolean;
  /** Why not, when not (`UNABLE_TO_VERIFY_LEAF_SIGNATURE`, `CERT_HAS_EXPIRED`, …). */
  readonly error?: string;
  readonly commonName: string;
  readonly organizations: readonly string[];
}

export interface PresentedCredentials {
  /** The Authorization header. */
  readonly authorization?: string;
  readonly certificate?: PresentedCertificate;
}

export type AuthResult =
  | { readonly kind: 'user'; readonly user: UserInfo; readonly method: 'x509' | 'token' }
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'failed'; readonly reasons: readonly string[] };

export interface AuthenticatorOptions {
  /** Client certificates are checked (a client CA is configured). */
  readonly x509: boolean;
  readonly tokens?: ReadonlyMap<string, UserInfo>;
}

/** `Bearer <token>` as Kubernetes reads it: scheme case-insensitive, an empty token counts as none. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const auth = (authorization ?? '').trim();
  if (auth === '') return undefined;
  const parts = auth.split(' ');
  if (parts.length < 2 || (parts[0] ?? '').toLowerCase() !== 'bearer') return undefined;
  const token = parts[1] ?? '';
  return token === '' ? undefined : token;
}

export class Authenticator {
  constructor(private readonly opts: AuthenticatorOptions) {}

  authenticate(creds: PresentedCredentials): AuthResult {
    const reasons: string[] = [];
    const cert = creds.certificate;
    if (this.opts.x509 && cert !== undefined) {
      if (!cert.authorized) {
        reasons.push(`verifying certificate ${JSON.stringify(cert.commonName)} failed: ${cert.error ?? 'not signed by the client CA'}`);
      } else if (cert.commonName !== '') {
        // A certificate without a CN names no user: Kubernetes treats it as no credential, not a failure.
        return { kind: 'user', user: authenticatedUser(cert.commonName, '', cert.organizations), method: 'x509' };
      }
    }
    const token = bearerToken(creds.authorization);
    if (token !== undefined) {
      const user = this.opts.tokens?.get(token);
      if (user !== undefined) return { kind: 'user', user, method: 'token' };
      reasons.push('invalid bearer token');
    }
    return reasons.length > 0 ? { kind: 'failed', reasons } : { kind: 'anonymous' };
  }
}
