// etcdserverpb.KV: Range, Put, DeleteRange, Txn and Compact, each mapped 1:1 onto the StoreApi call with
// the response header completed from the member (cluster, member, term) at the store's revision.
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { EdgeContext } from './edge.js';
import { ETCD_PACKAGE, unary } from './edge.js';
import type { WireDeleteRangeRequest, WirePutRequest, WireRangeRequest, WireTxnRequest } from './etcd-wire.js';
import { encodeHeaderField } from './watch-encode.js';
import { SLICED_KVS, encodeDeleteRangeResponse, encodeRangeResponse } from './kvs-response.js';
import { isTxnReadOnly, num, parseDeleteRange, parsePut, parseRange, parseTxn, wireHeader, wireKv, wireResponseOp } from './etcd-wire.js';

const SERVICE = `${ETCD_PACKAGE}.KV`;

export function kvService(ctx: EdgeContext): UntypedServiceImplementation {
  const { store } = ctx;
  const header = (rev: number) => wireHeader(store.header(rev), rev);
  return {
    Range: unary<WireRangeRequest, object>(
      ctx,
      SERVICE,
      'Range',
      async (req, _tooLarge, who) => {
        const r = await store.range(parseRange(req), { auth: await who() });
        if (r.kvs.length >= SLICED_KVS) return encodeRangeResponse(store.header(r.header.revision), r.kvs, r.more, r.count);
        return { header: header(r.header.revision), kvs: r.kvs.map(wireKv), more: r.more, count: r.count };
      },
      { learnerOk: (req) => req.serializable },
    ),
    Put: unary<WirePutRequest, object>(
      ctx,
      SERVICE,
      'Put',
      async (req, tooLarge, who) => {
        const r = await store.put(parsePut(req), { tooLarge, auth: await who() });
        // Without prev_kv the response is its header alone, encoded here rather than through protobufjs.
        if (!r.prevKv) return encodeHeaderField(store.header(r.header.revision));
        return { header: header(r.header.revision), prevKv: wireKv(r.prevKv) };
      },
      { proposal: () => true, storeChecks: true },
    ),
    DeleteRange: unary<WireDeleteRangeRequest, object>(
      ctx,
      SERVICE,
      'DeleteRange',
      async (req, tooLarge, who) => {
        const r = await store.deleteRange(parseDeleteRange(req), { tooLarge, auth: await who() });
        if (r.prevKvs.length >= SLICED_KVS) return encodeDeleteRangeResponse(store.header(r.header.revision), r.deleted, r.prevKvs);
        return { header: header(r.header.revision), deleted: r.deleted, prevKvs: r.prevKvs.map(wireKv) };
      },
      { proposal: () => true, storeChecks: true },
    ),
    Txn: unary<WireTxnRequest, object>(
      ctx,
      SERVICE,
      'Txn',
      async (req, tooLarge, who) => {
        const r = await store.txn(parseTxn(req), { tooLarge, auth: await who() });
        return { header: header(r.header.revision), succeeded: r.succeeded, responses: r.responses.map(wireResponseOp) };
      },
      // A read-only txn is served like a range in etcd: never proposed, so never too large.
      { proposal: (req) => !isTxnReadOnly(req), storeChecks: true },
    ),
    Compact: unary<{ revision: string; physical: boolean }, object>(
      ctx,
      SERVICE,
      'Compact',
      async (req, _tooLarge, who) => {
        // etcd checks no permission on a compaction, but the token must be one it knows.
        await who();
        const r = await store.compact(num(req.revision), req.physical);
        return { header: header(r.revision) };
      },
      { proposal: () => true },
    ),
  };
}
