// Member and cluster ids are etcd 3.4's, from the same bytes: checked against ids real etcd printed (its
// well-known default member, and a three-member cluster run on the URLs below with the token "tok"), and
// peer URLs are taken as etcd's types.NewURLs takes them, since the ids are derived from them.
import { describe, expect, it } from 'vitest';
import { Membership, clusterIdFor, memberIdFor, parseInitialCluster, parseMemberId, parsePeerURLs } from '../../../src/server/member/membership.js';

describe("etcd's member and cluster ids", () => {
  it("etcd's default member: --name default, http://localhost:2380, token etcd-cluster", () => {
    const id = memberIdFor(['http://localhost:2380'], 'etcd-cluster');
    expect(id.toString(16)).toBe('8e9e05c52164694d');
    expect(clusterIdFor([id]).toString(16)).toBe('cdf818194e3a8c32');
  });

  it('a three-member cluster as etcd 3.4 listed it; the cluster id does not depend on the order of the members', () => {
    const m = Membership.fromInitialCluster(parseInitialCluster('n1=http://127.0.0.1:41380,n2=http://127.0.0.1:41381,n3=http://127.0.0.1:41382'), 'tok');
    expect(m.list().map((x) => [BigInt(x.id).toString(16), x.name])).toEqual([
      ['298da9a3f41493cd', 'n3'],
      ['8027cae8a0e355ea', 'n1'],
      ['cfa6ba5483271eb1', 'n2'],
    ]);
    const ids = [...m.members.keys()];
    expect(clusterIdFor([...ids].reverse())).toBe(m.clusterId);
  });

  it('a member with several peer URLs: sorted first, so their order does not change the id', () => {
    expect(memberIdFor(['http://b:2', 'http://a:1'], 'tok')).toBe(memberIdFor(['http://a:1', 'http://b:2'], 'tok'));
    expect(parseInitialCluster('n1=http://b:2,n1=http://a:1').get('n1')).toEqual(['http://a:1', 'http://b:2']);
  });

  it('a member added at run time: no token, the Unix time in seconds (etcd MemberAdd)', () => {
    const a = memberIdFor(['http://127.0.0.1:41383'], '', 1_796_000_000);
    expect(a).not.toBe(memberIdFor(['http://127.0.0.1:41383'], '', 1_796_000_001));
    expect(a).not.toBe(memberIdFor(['http://127.0.0.1:41383'], 'tok', 1_796_000_000));
  });

  it('refuses founding members that would have the same id', () => {
    expect(() => Membership.fromInitialCluster(parseInitialCluster('a=http://x:1,b=http://x:1'), 't')).toThrow(/members a and b have the same id/);
  });
});

describe('peer URLs as etcd takes them', () => {
  it('trims, lowers the scheme and sorts', () => {
    expect(parsePeerURLs([' HTTP://b:1', 'http://a:2'])).toEqual(['http://a:2', 'http://b:1']);
    expect(parsePeerURLs(['https://[::1]:2380'])).toEqual(['https://[::1]:2380']);
  });

  it("refuses what etcd refuses, in etcd's words", () => {
    expect(() => parsePeerURLs([])).toThrow('no valid URLs given');
    expect(() => parsePeerURLs(['ftp://a:1'])).toThrow('URL scheme must be http, https, unix, or unixs: ftp://a:1');
    expect(() => parsePeerURLs(['http://a'])).toThrow('URL address does not have the form "host:port": http://a');
    expect(() => parsePeerURLs(['http://a:1:2'])).toThrow('URL address does not have the form "host:port": http://a:1:2');
    expect(() => parsePeerURLs(['http://a:1/x'])).toThrow('URL must not contain a path: http://a:1/x');
    expect(() => parseInitialCluster('n1=http://a')).toThrow('--initial-cluster: URL address does not have the form "host:port": http://a');
  });
});

describe('member ids from the store API (decimal uint64 strings)', () => {
  it('takes every uint64 and nothing else', () => {
    expect(parseMemberId('18446744073709551615')).toBe(2n ** 64n - 1n);
    expect(parseMemberId('9234572661426968042')).toBe(0x8027cae8a0e355ean);
    for (const bad of ['18446744073709551616', '-1', '0x10', '', '1.5']) expect(parseMemberId(bad), bad).toBeUndefined();
  });
});
