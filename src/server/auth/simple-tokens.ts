// etcd's simple tokens (auth/simple_token.go, --auth-token simple): a random 16-letter prefix and the
// Raft index of the Authenticate entry that assigned it ("<prefix>.<index>"), mapped to its user in each
// member's memory. A token lives --auth-token-ttl (300 s) from its last use; deleting a user, changing its
// password or disabling auth drops the user's tokens. Tokens are not persisted: after a restart a member
// answers "invalid auth token" and clients authenticate again, as with etcd.
import { randomInt } from 'node:crypto';

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const PREFIX_LENGTH = 16;
export const DEFAULT_TOKEN_TTL_S = 300;

export function tokenPrefix(): string {
  let s = '';
  for (let i = 0; i < PREFIX_LENGTH; i++) s += LETTERS[randomInt(LETTERS.length)];
  return s;
}

export class SimpleTokens {
  private readonly tokens = new Map<string, { user: string; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  assign(token: string, user: string): void {
    this.tokens.set(token, { user, expires: this.now() + this.ttlMs });
  }

  /** The token's user, renewing its TTL; undefined if unknown or expired. */
  user(token: string): string | undefined {
    const t = this.tokens.get(token);
    if (!t) return undefined;
    const now = this.now();
    if (now >= t.expires) {
      this.tokens.delete(token);
      return undefined;
    }
    t.expires = now + this.ttlMs;
    return t.user;
  }

  invalidateUser(user: string): void {
    for (const [k, t] of this.tokens) if (t.user === user) this.tokens.delete(k);
  }

  clear(): void {
    this.tokens.clear();
  }
}
