// etcdserverpb.Maintenance: alarms, status, hashes, defragment, leader transfer, and Snapshot — the store
// as an etcd bbolt file (src/kv/etcd-snapshot.ts) in 32 KiB chunks, then the sha256 of it, as etcd sends
// it: etcdctl snapshot save checks that the download is 512·n + 32 bytes and the hash before it renames the
// `.part` file, and `snapshot status` and `snapshot restore` open the file with bbolt. (bbolt files are
// whole pages; zero padding up to a multiple of 512 is there only for a store that streams otherwise.)
import { createHash } from 'node:crypto';
import type { handleServerStreamingCall, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { AlarmType } from '../member/store-api.js';
import type { EdgeContext } from './edge.js';
import { ETCD_PACKAGE, unary } from './edge.js';
import { serverStream } from './server-stream.js';
import type { Long } from './etcd-wire.js';
import { currentHeader, num } from './etcd-wire.js';

const SERVICE = `${ETCD_PACKAGE}.Maintenance`;
/** etcd's snapshot send buffer. */
const SNAPSHOT_CHUNK = 32 * 1024;
const SHA256_BYTES = 32;
/** etcdctl checks that a snapshot is 512-byte aligned before its hash (bbolt pages are). */
const ALIGN = 512;

const ALARM_ACTIONS = ['GET', 'ACTIVATE', 'DEACTIVATE'] as const;
const ALARM_TYPES: readonly AlarmType[] = ['NONE', 'NOSPACE', 'CORRUPT'];

interface WireAlarmRequest {
  readonly action: string | number;
  readonly memberID: Long;
  readonly alarm: string | number;
}

function alarmAction(v: string | number): (typeof ALARM_ACTIONS)[number] {
  return ALARM_ACTIONS.find((a) => a === v) ?? 'GET';
}

function alarmType(v: string | number): AlarmType {
  return ALARM_TYPES.find((a) => a === v) ?? 'NONE';
}

export function maintenanceService(ctx: EdgeContext): UntypedServiceImplementation {
  const { store } = ctx;
  return {
    Alarm: unary<WireAlarmRequest, object>(
      ctx,
      SERVICE,
      'Alarm',
      async (req) => {
        const r = await store.alarm(alarmAction(req.action), req.memberID, alarmType(req.alarm));
        // No header: etcd's applier builds an AlarmResponse without one and nothing fills it in
        // (`etcdctl alarm list -w json` prints {} when there are no alarms).
        return { alarms: r.alarms.map((a) => ({ memberID: a.memberId, alarm: a.alarm })) };
      },
      { proposal: () => true },
    ),
    Status: unary<object, object>(
      ctx,
      SERVICE,
      'Status',
      async () => {
        const s = await store.status();
        return {
          header: currentHeader(store),
          version: s.version,
          dbSize: s.dbSize,
          leader: s.leader,
          raftIndex: s.raftIndex,
          raftTerm: s.raftTerm,
          raftAppliedIndex: s.raftAppliedIndex,
          errors: s.errors,
          dbSizeInUse: s.dbSizeInUse,
          isLearner: s.isLearner,
        };
      },
      { learnerOk: () => true },
    ),
    // Defragment, Hash, HashKV, MoveLeader and Snapshot need the root role when auth is on (Alarm and Status do not).
    Defragment: unary<object, object>(ctx, SERVICE, 'Defragment', async (_req, _tooLarge, who) => {
      await store.auth?.checkMaintenance(who);
      await store.defragment();
      return { header: currentHeader(store) };
    }),
    Hash: unary<object, object>(ctx, SERVICE, 'Hash', async (_req, _tooLarge, who) => {
      await store.auth?.checkMaintenance(who);
      const r = await store.hash();
      return { header: currentHeader(store), hash: r.hash };
    }),
    HashKV: unary<{ revision: Long }, object>(ctx, SERVICE, 'HashKV', async (req, _tooLarge, who) => {
      await store.auth?.checkMaintenance(who);
      const r = await store.hashKV(num(req.revision));
      return { header: currentHeader(store), hash: r.hash, compactRevision: r.compactRevision };
    }),
    MoveLeader: unary<{ targetID: Long }, object>(ctx, SERVICE, 'MoveLeader', async (req, _tooLarge, who) => {
      await store.auth?.checkMaintenance(who);
      await store.moveLeader(req.targetID);
      return { header: currentHeader(store) };
    }),
    Snapshot: snapshot(ctx),
  };
}

/**
 * Streams the snapshot. The total is not known up front (the store streams it), so remaining_bytes is
 * what is known to be left — the rest of the chunk in hand, the next chunk, and the hash — exact once
 * the store's last chunk is in hand (padding included), and 0 on the final message.
 */
function snapshot(ctx: EdgeContext): handleServerStreamingCall<object, object> {
  return serverStream<object, object>(ctx, SERVICE, 'Snapshot', async (_req, sink, who) => {
    await ctx.store.auth?.checkMaintenance(who);
    // No header: etcd's SnapshotResponse messages carry only remaining_bytes and blob.
    const send = (blob: Buffer, remaining: number): Promise<void> => sink.send({ remainingBytes: remaining, blob });
    const sendPieces = async (chunk: Buffer, after: number): Promise<void> => {
      for (let off = 0; off < chunk.length && !sink.cancelled; off += SNAPSHOT_CHUNK) {
        const end = Math.min(off + SNAPSHOT_CHUNK, chunk.length);
        await send(chunk.subarray(off, end), chunk.length - end + after);
      }
    };
    const sha = createHash('sha256');
    let inHand: Buffer | undefined;
    let total = 0;
    for await (const c of ctx.store.snapshot()) {
      if (sink.cancelled) return;
      const next = Buffer.from(c.buffer, c.byteOffset, c.byteLength);
      sha.update(next);
      total += next.length;
      if (inHand) await sendPieces(inHand, next.length + SHA256_BYTES);
      inHand = next;
    }
    const padding = Buffer.alloc((ALIGN - (total % ALIGN)) % ALIGN);
    sha.update(padding);
    const last = inHand ? Buffer.concat([inHand, padding]) : padding;
    await sendPieces(last, SHA256_BYTES);
    if (!sink.cancelled) await send(sha.digest(), 0);
  });
}
