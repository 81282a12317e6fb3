// --max-concurrent-streams, etcd 3.5's flag: streams per client connection, bounded by default; the auth flags.
import { describe, expect, it } from 'vitest';
import { FlagError, flagsFromEnv, parseStoreFlags } from '../../../src/server/embed/store-flags.js';
import { DEFAULT_MAX_CONCURRENT_STREAMS } from '../../../src/server/http2/limits.js';

describe('--max-concurrent-streams', () => {
  it('defaults to a bounded number, and takes etcd 3.5\'s spelling from a flag or ETCD_MAX_CONCURRENT_STREAMS', () => {
    expect(parseStoreFlags({}).maxConcurrentStreams).toBe(DEFAULT_MAX_CONCURRENT_STREAMS);
    expect(DEFAULT_MAX_CONCURRENT_STREAMS).toBe(1000);
    expect(parseStoreFlags({ 'max-concurrent-streams': '20' }).maxConcurrentStreams).toBe(20);
    expect(parseStoreFlags(flagsFromEnv({ ETCD_MAX_CONCURRENT_STREAMS: '4294967295' })).maxConcurrentStreams).toBe(4_294_967_295);
  });

  it('refuses what SETTINGS_MAX_CONCURRENT_STREAMS cannot say, or no stream at all', () => {
    for (const v of ['0', '-1', '1.5', 'many', '4294967296']) expect(() => parseStoreFlags({ 'max-concurrent-streams': v }), v).toThrow(FlagError);
  });
});

describe('auth flags', () => {
  it("takes etcd's --auth-token simple, --auth-token-ttl and --bcrypt-cost, with etcd's defaults", () => {
    expect(parseStoreFlags({})).toMatchObject({ authTokenTtl: 300, bcryptCost: 10 });
    expect(parseStoreFlags({ 'auth-token': 'simple', 'auth-token-ttl': '60', 'bcrypt-cost': '4' })).toMatchObject({ authTokenTtl: 60, bcryptCost: 4 });
    expect(parseStoreFlags(flagsFromEnv({ ETCD_BCRYPT_COST: '12' })).bcryptCost).toBe(12);
  });

  it('refuses JWT tokens, which it does not serve, and costs bcrypt does not take', () => {
    expect(() => parseStoreFlags({ 'auth-token': 'jwt,pub-key=a,priv-key=b,sign-method=RS256' })).toThrow(FlagError);
    for (const v of ['3', '32', 'x']) expect(() => parseStoreFlags({ 'bcrypt-cost': v }), v).toThrow(FlagError);
  });
});
