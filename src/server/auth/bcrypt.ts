// bcrypt as etcd hashes user passwords ($2a$, cost --bcrypt-cost, 10 by default; a password counts up to
// 72 bytes), through the bcryptjs package. bcrypt-pool.ts runs these on a worker thread, so the member's
// thread (its Raft loop) never waits on bcrypt's deliberately slow key schedule.
import bcrypt from 'bcryptjs';

export const DEFAULT_BCRYPT_COST = 10;

/** Hashes a password with a fresh salt ("$2a$10$..." at cost 10, the prefix etcd's Go bcrypt writes). */
export function bcryptHash(password: string, cost = DEFAULT_BCRYPT_COST): string {
  if (!Number.isInteger(cost) || cost < 4 || cost > 31) throw new Error(`bcrypt: cost ${cost} is outside [4, 31]`);
  return bcrypt.hashSync(password, bcrypt.genSaltSync(cost).replace(/^\$2b\$/, '$2a$'));
}

/** Whether `password` matches a "$2a$"/"$2b$"/"$2y$" hash (false for anything that is not one). */
export function bcryptCompare(password: string, hash: string): boolean {
  if (!/^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/.test(hash)) return false;
  return bcrypt.compareSync(password, hash.replace(/^\$2y\$/, '$2b$'));
}

/** For tests: the hash of a password with a given salt (22 bcrypt-base64 characters). */
export function bcryptWithSalt(password: string, cost: number, salt: string): string {
  return bcrypt.hashSync(password, `$2a$${String(cost).padStart(2, '0')}$${salt}`);
}
