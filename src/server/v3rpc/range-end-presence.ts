// A range_end that is on the wire but empty. Go's decoder keeps it as a non-nil empty slice, and etcd
// then reads the range as having no upper bound — every key >= key, as range_end "\0" does — in Range,
// DeleteRange and a Txn's compares and ops (a Watch forces it back to the single key). proto-loader's
// decoding fills in absent fields with the same empty Buffer, so the difference is lost by the time a
// request reaches the service. Go clients never send an empty range_end (their encoder leaves empty bytes
// out), but protobufjs and others write a field that was set, even to nothing. This walks the raw bytes
// of the request alongside the decoded object and marks such fields as "\0".
import { WIRE_LEN, wireFields as fields } from '../../kv/pb.js';

/** The decoded form of "no upper bound" (see src/kv/key-range.ts). */
const GTE = (): Buffer => Buffer.from([0]);

type Obj = Record<string, unknown>;

/** RangeRequest, DeleteRangeRequest (range_end = 2) and Compare (range_end = 64). */
function markRangeEnd(b: Uint8Array, from: number, to: number, obj: unknown, fieldNo: number): void {
  if (typeof obj !== 'object' || obj === null) return;
  for (const f of fields(b, from, to)) {
    if (f.no === fieldNo && f.wire === WIRE_LEN && f.end === f.start) (obj as Obj).rangeEnd = GTE();
  }
}

/** TxnRequest: compare = 1, success = 2, failure = 3; a RequestOp holds range = 1, delete = 3, txn = 4. */
function markTxn(b: Uint8Array, from: number, to: number, obj: unknown): void {
  if (typeof obj !== 'object' || obj === null) return;
  const t = obj as { compare?: unknown[]; success?: unknown[]; failure?: unknown[] };
  const seen = { 1: 0, 2: 0, 3: 0 };
  for (const f of fields(b, from, to)) {
    if (f.wire !== WIRE_LEN || (f.no !== 1 && f.no !== 2 && f.no !== 3)) continue;
    const i = seen[f.no]++;
    if (f.no === 1) {
      markRangeEnd(b, f.start, f.end, t.compare?.[i], 64);
      continue;
    }
    const op = (f.no === 2 ? t.success : t.failure)?.[i] as Obj | undefined;
    if (!op) continue;
    for (const g of fields(b, f.start, f.end)) {
      if (g.wire !== WIRE_LEN) continue;
      if (g.no === 1) markRangeEnd(b, g.start, g.end, op.requestRange, 2);
      else if (g.no === 3) markRangeEnd(b, g.start, g.end, op.requestDeleteRange, 2);
      else if (g.no === 4) markTxn(b, g.start, g.end, op.requestTxn);
    }
  }
}

/** Marks present-but-empty range_end fields of a decoded KV request (by method name) as "\0". */
export function markEmptyRangeEnds(method: string, raw: Uint8Array, decoded: object): void {
  if (method === 'Range' || method === 'DeleteRange') markRangeEnd(raw, 0, raw.length, decoded, 2);
  else if (method === 'Txn') markTxn(raw, 0, raw.length, decoded);
}
