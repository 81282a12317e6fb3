// --max-concurrent-streams, etcd 3.5's flag: streams per client connection, bounded by default.
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
