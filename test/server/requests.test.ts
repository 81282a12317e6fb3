// What goes into the Raft log (src/server/requests.ts): a put in its binary layout decodes to the same
// request, every other request (and a put written as msgpack before the layout existed) still decodes.
import fc from 'fast-check';
import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodeRequest, encodeRequest } from '../../src/server/requests.js';
import type { InternalRequest } from '../../src/server/requests.js';
import type { PutRequest } from '../../src/kv/types.js';

const put: fc.Arbitrary<PutRequest> = fc.record(
  {
    key: fc.uint8Array({ minLength: 1, maxLength: 300 }),
    value: fc.uint8Array({ maxLength: 2000 }),
    lease: fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map(String)),
    prevKv: fc.boolean(),
    ignoreValue: fc.boolean(),
    ignoreLease: fc.boolean(),
  },
  { requiredKeys: ['key'] },
);
const id = fc.stringMatching(/^[0-9a-z]{1,14}\.[0-9a-z]{1,10}$/);

/** The request as the apply path reads it: absent value and lease, false flags. */
function normal(p: PutRequest): object {
  return {
    key: Buffer.from(p.key),
    value: p.value === undefined ? undefined : Buffer.from(p.value),
    lease: p.lease,
    prevKv: p.prevKv === true,
    ignoreValue: p.ignoreValue === true,
    ignoreLease: p.ignoreLease === true,
  };
}

describe('Raft log requests', () => {
  it('a put in its binary layout decodes to the request it was made from', () => {
    fc.assert(
      fc.property(id, put, (i, p) => {
        const data = encodeRequest({ t: 'put', id: i, req: p });
        expect(data[0]).toBe(0x01);
        const back = decodeRequest(data);
        expect(back.t).toBe('put');
        expect(back.id).toBe(i);
        expect(normal((back as { req: PutRequest }).req)).toEqual(normal(p));
      }),
      { numRuns: 500 },
    );
  });

  it('decodes a put inside a larger buffer (an entry is often a view into a received batch)', () => {
    const data = encodeRequest({ t: 'put', id: 'a.1', req: { key: Buffer.from('k'), value: Buffer.from('v'), lease: '7' } });
    const big = Buffer.concat([Buffer.from('junk'), data, Buffer.from('more')]);
    const back = decodeRequest(big.subarray(4, 4 + data.length)) as { req: PutRequest };
    expect(normal(back.req)).toEqual(normal({ key: Buffer.from('k'), value: Buffer.from('v'), lease: '7' }));
  });

  it('still decodes msgpack: puts written before the layout, and every other request', () => {
    const old: InternalRequest = { t: 'put', id: 'x.2', req: { key: Buffer.from('a'), value: Buffer.from('b'), prevKv: true } };
    expect(decodeRequest(pack(old))).toEqual(old);
    const others: InternalRequest[] = [
      { t: 'txn', id: 'x.3', req: { compare: [], success: [{ requestPut: { key: Buffer.from('a'), value: Buffer.from('1') } }], failure: [] } },
      { t: 'deleteRange', id: 'x.4', req: { key: Buffer.from('a'), rangeEnd: Buffer.from('b') } },
      { t: 'compact', id: 'x.5', revision: 9 },
      { t: 'leaseGrant', id: 'x.6', lease: '12', ttl: 5 },
    ];
    for (const r of others) {
      const data = encodeRequest(r);
      expect(data[0]).not.toBe(0x01);
      expect(decodeRequest(data)).toEqual(r);
    }
  });
});
