// Authentication's decisions without a socket: Kubernetes' token-file CSV as kube-apiserver reads it,
// bearer headers as its authenticator parses them, and the union's order (a certificate, then a
// token; failure only when something was presented and nothing succeeded; else anonymous).
import { describe, expect, it } from 'vitest';
import { Authenticator, bearerToken } from '../../src/apiserver/authn/authenticator.js';
import { TokenFileError, parseCsv, parseTokenFile } from '../../src/apiserver/authn/token-file.js';

describe('token file', () => {
  it('reads token,user,uid,"groups" lines, with system:authenticated added', () => {
    const tokens = parseTokenFile('t1,alice,uid-1,"dev,ops"\nt2,bob,uid-2\n\nt3,carol,uid-3,single\n', 'tokens.csv');
    expect(tokens.get('t1')).toEqual({ name: 'alice', uid: 'uid-1', groups: ['dev', 'ops', 'system:authenticated'] });
    expect(tokens.get('t2')).toEqual({ name: 'bob', uid: 'uid-2', groups: ['system:authenticated'] });
    expect(tokens.get('t3')?.groups).toEqual(['single', 'system:authenticated']);
  });

  it('needs three columns, skips empty tokens, lets a later duplicate win, with Kubernetes\' warnings', () => {
    expect(() => parseTokenFile('t1,alice\n', 'f.csv')).toThrow("token file 'f.csv' must have at least 3 columns (token, user name, user uid), found 2");
    const warnings: string[] = [];
    const tokens = parseTokenFile(',nobody,u0\nt,first,u1\nt,second,u2\n', 'f.csv', (m) => warnings.push(m));
    expect(tokens.get('t')?.name).toBe('second');
    expect(tokens.size).toBe(1);
    expect(warnings).toEqual([
      "empty token has been found in token file 'f.csv', record number '1'",
      "duplicate token has been found in token file 'f.csv', record number '3'",
    ]);
  });

  it('parses CSV as Go does: quotes, doubled quotes, CRLF, and refuses bare quotes', () => {
    expect(parseCsv('a,"b ""c"", d",e\r\nf,g,h')).toEqual([
      ['a', 'b "c", d', 'e'],
      ['f', 'g', 'h'],
    ]);
    expect(() => parseCsv('a,b"c,d\n')).toThrow(TokenFileError);
    expect(() => parseCsv('a,"bc\n')).toThrow(/extraneous or missing "/);
  });
});

describe('authenticator', () => {
  const tokens = parseTokenFile('good,bob,uid-bob,viewers\n', 't.csv');
  const auth = new Authenticator({ x509: true, tokens });
  const cert = { authorized: true, commonName: 'alice', organizations: ['dev'] };

  it('reads Bearer headers as Kubernetes does', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('  Bearer abc  ')).toBe('abc');
    expect(bearerToken('Bearer  abc')).toBeUndefined();
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  it('a verified certificate: CN the user, O the groups', () => {
    expect(auth.authenticate({ certificate: cert })).toEqual({ kind: 'user', method: 'x509', user: { name: 'alice', uid: '', groups: ['dev', 'system:authenticated'] } });
  });

  it('a token from the file', () => {
    expect(auth.authenticate({ authorization: 'Bearer good' })).toMatchObject({ kind: 'user', method: 'token', user: { name: 'bob', uid: 'uid-bob' } });
  });

  it('a bad token fails even with nothing else; a bad certificate fails unless a token succeeds', () => {
    expect(auth.authenticate({ authorization: 'Bearer nope' })).toEqual({ kind: 'failed', reasons: ['invalid bearer token'] });
    const bad = { authorized: false, error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', commonName: 'mallory', organizations: ['system:masters'] };
    expect(auth.authenticate({ certificate: bad })).toMatchObject({ kind: 'failed' });
    expect(auth.authenticate({ certificate: bad, authorization: 'Bearer good' })).toMatchObject({ kind: 'user', user: { name: 'bob' } });
  });

  it('nothing presented is anonymous; a certificate without a CN is no credential', () => {
    expect(auth.authenticate({})).toEqual({ kind: 'anonymous' });
    expect(auth.authenticate({ authorization: 'Basic dXNlcjpwdw==' })).toEqual({ kind: 'anonymous' });
    expect(auth.authenticate({ certificate: { authorized: true, commonName: '', organizations: ['x'] } })).toEqual({ kind: 'anonymous' });
  });

  it('without a client CA, certificates are not looked at', () => {
    expect(new Authenticator({ x509: false }).authenticate({ certificate: cert })).toEqual({ kind: 'anonymous' });
  });
});
