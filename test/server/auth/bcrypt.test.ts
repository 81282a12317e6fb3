import { describe, expect, it } from 'vitest';
import { bcryptCompare, bcryptHash, bcryptWithSalt } from '../../../src/server/auth/bcrypt.js';

describe('bcrypt', () => {
  it('matches the published $2a$ test vector', () => {
    // From OpenBSD's and John the Ripper's bcrypt test vectors.
    expect(bcryptWithSalt('U*U', 5, 'CCCCCCCCCCCCCCCCCCCCC.')).toBe('$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW');
  });

  it('hashes with a fresh salt at the given cost, and compares', () => {
    const h = bcryptHash('secret', 4);
    expect(h).toMatch(/^\$2a\$04\$[./A-Za-z0-9]{53}$/);
    expect(bcryptHash('secret', 4)).not.toBe(h);
    expect(bcryptCompare('secret', h)).toBe(true);
    expect(bcryptCompare('Secret', h)).toBe(false);
    expect(bcryptCompare('secret', 'not a hash')).toBe(false);
  });

  it('counts a password up to 72 bytes, as Go and OpenBSD do', () => {
    const long = 'x'.repeat(72);
    const h = bcryptHash(long, 4);
    expect(bcryptCompare(`${long}y`, h)).toBe(true);
    expect(bcryptCompare(long.slice(1), h)).toBe(false);
  });
});
