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

  it('reads --auth-token jwt,… as etcd 3.4 does (keys are read at start), and refuses what etcd refuses', () => {
    expect(parseStoreFlags({}).authToken).toEqual({ type: 'simple' });
    expect(parseStoreFlags({ 'auth-token': 'jwt,pub-key=a.pub,priv-key=a.key,sign-method=RS256' }).authToken).toEqual({
      type: 'jwt',
      signMethod: 'RS256',
      pubKeyFile: 'a.pub',
      privKeyFile: 'a.key',
      ttlMs: 300_000,
    });
    expect(parseStoreFlags({ 'auth-token': 'jwt,priv-key=k,sign-method=ES256,ttl=1h30m,other=ignored' }).authToken).toMatchObject({ signMethod: 'ES256', ttlMs: 5_400_000 });
    expect(parseStoreFlags({ 'auth-token': 'jwt,priv-key=k,sign-method=HS512,ttl=1.5s' }).authToken).toMatchObject({ ttlMs: 1500 });
    for (const v of ['jwt,priv-key=k', 'jwt,priv-key=k,sign-method=none', 'jwt,priv-key=k,sign-method=RS256,ttl=5', 'jwt,priv-key=k,priv-key=j,sign-method=RS256', 'jwt,priv-key', 'oauth', '']) {
      expect(() => parseStoreFlags({ 'auth-token': v }), v).toThrow(FlagError);
    }
    expect(() => parseStoreFlags({ 'auth-token': 'jwt,sign-method=RS256,ttl=x' })).toThrow('--auth-token: "jwt,sign-method=RS256,ttl=x": auth: invalid auth options');
  });

  it('refuses costs bcrypt does not take', () => {
    for (const v of ['3', '32', 'x']) expect(() => parseStoreFlags({ 'bcrypt-cost': v }), v).toThrow(FlagError);
  });
});
