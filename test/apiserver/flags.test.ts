// `setpoint apiserver`'s flags: kube-apiserver's names and defaults, durations as Go reads and prints
// them, and one readable line (pflag's wording) for each kind of wrong value.
import { describe, expect, it } from 'vitest';
import { APISERVER_FLAGS, defaultForHelp, parseApiServerFlags } from '../../src/apiserver/apiserver-flags.js';

const base = { 'etcd-servers': 'http://127.0.0.1:2379' };

describe('apiserver flags', () => {
  it("Kubernetes' defaults", () => {
    const f = parseApiServerFlags(base);
    expect(f).toMatchObject({
      etcd: { servers: ['http://127.0.0.1:2379'], prefix: '/registry', compactionIntervalMs: 300_000, healthcheckTimeoutMs: 2000 },
      securePort: 6443,
      bindAddress: '0.0.0.0',
      certDir: '/var/run/kubernetes',
      anonymousAuth: true,
      eventTtlSeconds: 3600,
      maxRequestsInflight: 400,
      maxMutatingRequestsInflight: 200,
      requestTimeoutMs: 60_000,
      minRequestTimeoutSeconds: 1800,
      maxRequestBodyBytes: 3 * 1024 * 1024,
      http2MaxStreamsPerConnection: 0,
    });
    expect(f.tls).toBeUndefined();
    expect(f.advertiseAddress).toBeUndefined();
  });

  it('help shows durations as Go prints them', () => {
    const byName = new Map(APISERVER_FLAGS.map((x) => [x.name, defaultForHelp(x)]));
    expect(byName.get('etcd-compaction-interval')).toBe('5m0s');
    expect(byName.get('event-ttl')).toBe('1h0m0s');
    expect(byName.get('request-timeout')).toBe('1m0s');
    expect(byName.get('etcd-healthcheck-timeout')).toBe('2s');
    for (const x of APISERVER_FLAGS) expect(x.help.length, x.name).toBeGreaterThan(10);
  });

  it('takes Go durations, several servers, TLS pairs and booleans as pflag spells them', () => {
    const f = parseApiServerFlags({
      ...base,
      'etcd-servers': 'https://a:2379, https://b:2379',
      'etcd-cafile': 'ca.crt',
      'etcd-certfile': 'c.crt',
      'etcd-keyfile': 'c.key',
      'event-ttl': '90m',
      'request-timeout': '30s',
      'tls-cert-file': 's.crt',
      'tls-private-key-file': 's.key',
      'anonymous-auth': 'f',
      'advertise-address': '10.0.0.5',
      'etcd-prefix': '/other/',
    });
    expect(f.etcd).toMatchObject({ servers: ['https://a:2379', 'https://b:2379'], caFile: 'ca.crt', certFile: 'c.crt', keyFile: 'c.key', prefix: '/other' });
    expect([f.eventTtlSeconds, f.requestTimeoutMs, f.anonymousAuth, f.advertiseAddress]).toEqual([5400, 30_000, false, '10.0.0.5']);
    expect(f.tls).toEqual({ certFile: 's.crt', keyFile: 's.key' });
  });

  it.each([
    [{}, '--etcd-servers must be specified'],
    [{ 'etcd-servers': 'unix:///x' }, 'invalid argument "unix:///x" for "--etcd-servers" flag: must be an http:// or https:// URL'],
    [{ ...base, 'secure-port': 'abc' }, 'invalid argument "abc" for "--secure-port" flag: must be an integer from 0 to 65535'],
    [{ ...base, 'secure-port': '70000' }, 'invalid argument "70000" for "--secure-port" flag: must be an integer from 0 to 65535'],
    [{ ...base, 'request-timeout': '5' }, 'invalid argument "5" for "--request-timeout" flag: time: missing unit in duration "5"'],
    [{ ...base, 'request-timeout': '0s' }, 'invalid argument "0s" for "--request-timeout" flag: must be greater than 0'],
    [{ ...base, 'event-ttl': '-1h' }, 'invalid argument "-1h" for "--event-ttl" flag: must not be negative'],
    [{ ...base, 'bind-address': 'localhost' }, 'invalid argument "localhost" for "--bind-address" flag: must be an IP address'],
    [{ ...base, 'anonymous-auth': 'maybe' }, 'invalid argument "maybe" for "--anonymous-auth" flag: must be true or false'],
    [{ ...base, 'tls-cert-file': 'x.crt' }, '--tls-cert-file and --tls-private-key-file go together'],
    [{ ...base, 'etcd-keyfile': 'x.key' }, '--etcd-certfile and --etcd-keyfile go together'],
    [{ ...base, 'max-requests-inflight': '-1' }, 'invalid argument "-1" for "--max-requests-inflight" flag: must be an integer >= 0'],
    [{ ...base, 'etcd-prefix': 'registry' }, 'invalid argument "registry" for "--etcd-prefix" flag: must start with \'/\''],
    [{ ...base, nope: '1' }, 'unknown flag: --nope'],
  ])('%j: %s', (raw, message) => {
    expect(() => parseApiServerFlags(raw)).toThrow(message);
  });
});
