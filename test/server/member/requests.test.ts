// What goes into the Raft log (src/server/member/requests.ts): a put and a txn in their binary layouts decode to
// the same requests, every other request (and entries written as msgpack before the layouts) still decodes.
import fc from 'fast-check';
import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodeRequest, encodeRequest } from '../../../src/server/member/requests.js';
import type { InternalRequest } from '../../../src/server/member/requests.js';
import { plain } from './helpers/plain.js';
import type { Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from '../../../src/kv/types.js';

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
    for (const r of others) expect(decodeRequest(pack(r))).toEqual(r);
    for (const r of others.slice(1)) {
      const data = encodeRequest(r);
      expect(data[0]).toBeGreaterThanOrEqual(0x80);
      expect(decodeRequest(data)).toEqual(r);
    }
  });

  it('a txn in its binary layout decodes to the request it was made from, nested txns and every field included', () => {
    fc.assert(
      fc.property(id, txn, (i, t) => {
        const data = encodeRequest({ t: 'txn', id: i, req: t });
        expect(data[0]).toBe(0x02);
        const back = decodeRequest(data);
        expect(back.t).toBe('txn');
        expect(back.id).toBe(i);
        expect(plain((back as { req: TxnRequest }).req)).toEqual(plain(t));
      }),
      { numRuns: 500 },
    );
  });

  it('decodes a txn inside a larger buffer, and refuses trailing bytes', () => {
    const t: TxnRequest = {
      compare: [{ result: 'EQUAL', target: 'MOD', key: Buffer.from('k'), modRevision: 7 }],
      success: [{ requestPut: { key: Buffer.from('k'), value: Buffer.from('v') } }],
      failure: [{ requestRange: { key: Buffer.from('k') } }],
    };
    const data = encodeRequest({ t: 'txn', id: 'a.1', req: t });
    const big = Buffer.concat([Buffer.from('junk'), data, Buffer.from('more')]);
    expect(plain((decodeRequest(big.subarray(4, 4 + data.length)) as { req: TxnRequest }).req)).toEqual(plain(t));
    expect(() => decodeRequest(big.subarray(4, 5 + data.length))).toThrow(/trailing/);
  });

  it('falls back to msgpack for a txn the layout cannot hold exactly', () => {
    const odd: InternalRequest[] = [
      { t: 'txn', id: 'x'.repeat(300), req: { success: [] } },
      { t: 'txn', id: 'x.1', req: { compare: [{ result: 'ABOUT' as 'EQUAL', target: 'MOD', key: Buffer.from('k') }] } },
      { t: 'txn', id: 'x.2', req: { success: [{ requestPut: { key: Buffer.from('k'), lease: 'é'.repeat(40_000) } }] } },
      { t: 'txn', id: 'x.3', req: { success: [{ requestRange: { key: Buffer.from('k'), limit: '5' as unknown as number } }] } },
    ];
    for (const r of odd) {
      const data = encodeRequest(r);
      expect(data[0]).toBeGreaterThanOrEqual(0x80);
      expect(decodeRequest(data)).toEqual(r);
    }
  });
});


const bytes = fc.uint8Array({ maxLength: 40 });
const num = fc.oneof(fc.integer({ min: -5, max: 2 ** 53 }), fc.double());
const opt = { requiredKeys: [] as never[] };
const compare: fc.Arbitrary<Compare> = fc.record(
  {
    result: fc.constantFrom('EQUAL', 'GREATER', 'LESS', 'NOT_EQUAL'),
    target: fc.constantFrom('VERSION', 'CREATE', 'MOD', 'VALUE', 'LEASE'),
    key: bytes,
    rangeEnd: bytes,
    version: num,
    createRevision: num,
    modRevision: num,
    value: bytes,
    lease: fc.string({ unit: 'grapheme', maxLength: 20 }),
  },
  opt,
) as fc.Arbitrary<Compare>;
const range: fc.Arbitrary<RangeRequest> = fc.record(
  {
    key: bytes,
    rangeEnd: bytes,
    limit: num,
    revision: num,
    sortOrder: fc.constantFrom('NONE', 'ASCEND', 'DESCEND'),
    sortTarget: fc.constantFrom('KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE'),
    serializable: fc.boolean(),
    keysOnly: fc.boolean(),
    countOnly: fc.boolean(),
    minModRevision: num,
    maxModRevision: num,
    minCreateRevision: num,
    maxCreateRevision: num,
  },
  opt,
) as fc.Arbitrary<RangeRequest>;
const del: fc.Arbitrary<DeleteRangeRequest> = fc.record({ key: bytes, rangeEnd: bytes, prevKv: fc.boolean() }, opt) as fc.Arbitrary<DeleteRangeRequest>;
const { txn } = fc.letrec<{ txn: TxnRequest; op: RequestOp }>((tie) => ({
  txn: fc.record(
    {
      compare: fc.array(compare, { maxLength: 3 }),
      success: fc.array(tie('op'), { maxLength: 3 }),
      failure: fc.array(tie('op'), { maxLength: 3 }),
    },
    opt,
  ) as fc.Arbitrary<TxnRequest>,
  op: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ requestRange: range }),
    fc.record({ requestPut: put }),
    fc.record({ requestDeleteRange: del }),
    fc.record({ requestTxn: tie('txn') }),
  ) as fc.Arbitrary<RequestOp>,
}));
