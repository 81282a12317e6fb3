// A range_end sent but empty means "no upper bound" in etcd (Go keeps it as a non-nil empty slice); an
// absent one means the single key. Both decode to the same empty Buffer, so the KV service definition
// marks the sent-but-empty ones as "\0" — in Range, DeleteRange, and a Txn's compares and nested ops.
import { describe, expect, it } from 'vitest';
import type { MethodDefinition } from '@grpc/grpc-js';
import { etcdPackageDefinition, etcdServiceDefinition } from '../../../src/server/v3rpc/etcd-proto.js';

type Codec = MethodDefinition<object, object>;
const raw = etcdPackageDefinition()['etcdserverpb.KV'] as unknown as Record<string, Codec>;
const kv = etcdServiceDefinition('KV') as unknown as Record<string, Codec>;
const GTE = Buffer.from([0]);
const NONE = Buffer.alloc(0);

/** Encodes with protobufjs (which writes a field that was set, even to nothing), decodes through the service. */
function roundTrip<T>(method: string, req: object): T {
  return kv[method]!.requestDeserialize(raw[method]!.requestSerialize(req)) as T;
}

describe('empty range_end presence', () => {
  it('Range and DeleteRange: sent empty is every key >= key, absent is the single key', () => {
    expect(roundTrip<{ rangeEnd: Buffer }>('Range', { key: Buffer.from('b'), rangeEnd: NONE }).rangeEnd).toEqual(GTE);
    expect(roundTrip<{ rangeEnd: Buffer }>('Range', { key: Buffer.from('b') }).rangeEnd).toEqual(NONE);
    expect(roundTrip<{ rangeEnd: Buffer }>('Range', { key: Buffer.from('b'), rangeEnd: Buffer.from('c') }).rangeEnd).toEqual(Buffer.from('c'));
    expect(roundTrip<{ rangeEnd: Buffer }>('DeleteRange', { key: Buffer.from('b'), rangeEnd: NONE }).rangeEnd).toEqual(GTE);
    expect(roundTrip<{ rangeEnd: Buffer }>('DeleteRange', { key: Buffer.from('b') }).rangeEnd).toEqual(NONE);
  });

  it("Txn: each compare and each op (nested txns too) keeps its own presence", () => {
    type Op = { requestRange?: { rangeEnd: Buffer }; requestDeleteRange?: { rangeEnd: Buffer }; requestTxn?: Txn };
    type Txn = { compare: { rangeEnd: Buffer }[]; success: Op[]; failure: Op[] };
    const t = roundTrip<Txn>('Txn', {
      compare: [
        { key: Buffer.from('a'), target: 'VERSION', result: 'EQUAL', version: 1 },
        { key: Buffer.from('a'), rangeEnd: NONE, target: 'VERSION', result: 'EQUAL', version: 1 },
      ],
      success: [
        { requestPut: { key: Buffer.from('p'), value: Buffer.from('v') } },
        { requestRange: { key: Buffer.from('a'), rangeEnd: NONE } },
        { requestDeleteRange: { key: Buffer.from('d') } },
      ],
      failure: [{ requestTxn: { success: [{ requestDeleteRange: { key: Buffer.from('x'), rangeEnd: NONE } }, { requestRange: { key: Buffer.from('y') } }] } }],
    });
    expect(t.compare.map((c) => c.rangeEnd)).toEqual([NONE, GTE]);
    expect(t.success[1]?.requestRange?.rangeEnd).toEqual(GTE);
    expect(t.success[2]?.requestDeleteRange?.rangeEnd).toEqual(NONE);
    const inner = t.failure[0]?.requestTxn as Txn;
    expect(inner.success[0]?.requestDeleteRange?.rangeEnd).toEqual(GTE);
    expect(inner.success[1]?.requestRange?.rangeEnd).toEqual(NONE);
  });
});
