// Streams one snapshot to a peer over the Snapshot RPC: the 'snap' message as header, then the key-value
// state as the producer yields it, then a trailer with totals. Reads the producer only as fast as the
// peer takes the data (one write in flight), so the whole state is never held in memory.
import type { Client, ClientWritableStream, Metadata, ServiceError } from '@grpc/grpc-js';
import type { Message, NodeId } from '../../raft/types.js';
import { messageToWire } from './codec.js';
import { PeerError, peerErrorOf } from './errors.js';
import { KV_BATCH_BYTES, MAX_KV_CHUNK_BYTES, peerService } from './proto.js';
import type { Empty, WireSnapshotChunk } from './proto.js';

export interface SnapshotSendOptions {
  readonly client: Client;
  readonly metadata: Metadata;
  readonly peer: NodeId;
  readonly message: Message;
  readonly kv: AsyncIterable<Uint8Array>;
  /** Longest wait for one write, or for the answer after the trailer. */
  readonly stallTimeoutMs: number;
  readonly signal?: AbortSignal;
}

export interface SnapshotSendResult {
  readonly chunks: number;
  readonly bytes: number;
}

/** Resolves once the peer has staged the snapshot; rejects with a PeerError otherwise. */
export async function sendSnapshot(opts: SnapshotSendOptions): Promise<SnapshotSendResult> {
  const svc = peerService().snapshot;
  // Settles when the call ends: a peer may answer (or fail) before we have written everything.
  let settle!: (err: ServiceError | null) => void;
  const ended = new Promise<ServiceError | null>((resolve) => (settle = resolve));
  const call: ClientWritableStream<WireSnapshotChunk> = opts.client.makeClientStreamRequest<WireSnapshotChunk, Empty>(
    svc.path,
    svc.requestSerialize,
    svc.responseDeserialize,
    opts.metadata,
    {},
    (err) => settle(err),
  );
  call.on('error', () => {});
  const abort = (): void => call.cancel();
  opts.signal?.addEventListener('abort', abort, { once: true });

  let endedEarly: ServiceError | null | undefined;
  void ended.then((e) => (endedEarly = e));

  const fail = (err: ServiceError | null, what: string): PeerError =>
    err ? peerErrorOf(err, opts.peer) : new PeerError('PEER_SNAPSHOT_FAILED', `snapshot to peer ${opts.peer.toString(16)}: ${what}`);

  /** Writes one chunk and waits until grpc-js has taken it, the call ended, or the peer stalled. */
  const write = async (chunk: WireSnapshotChunk): Promise<boolean> => {
    if (endedEarly !== undefined) return false;
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<'stalled'>((resolve) => {
      timer = setTimeout(() => resolve('stalled'), opts.stallTimeoutMs);
    });
    const written = new Promise<'written'>((resolve) => call.write(chunk, () => resolve('written')));
    try {
      const r = await Promise.race([written, stalled, ended.then(() => 'ended' as const)]);
      if (r === 'stalled') {
        call.cancel();
        throw new PeerError('PEER_SNAPSHOT_FAILED', `snapshot to peer ${opts.peer.toString(16)}: no progress for ${opts.stallTimeoutMs} ms`);
      }
      return r === 'written';
    } finally {
      clearTimeout(timer);
    }
  };

  let chunks = 0;
  let bytes = 0;
  try {
    if (!(await write({ part: 'header', header: messageToWire(opts.message) }))) throw fail(await ended, 'ended before the header');
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    for await (const c of opts.kv) {
      if (c.length > MAX_KV_CHUNK_BYTES) {
        throw new PeerError('PEER_SNAPSHOT_FAILED', `snapshot to peer ${opts.peer.toString(16)}: a kv chunk of ${c.length} bytes exceeds the ${MAX_KV_CHUNK_BYTES}-byte limit`);
      }
      if (pending.length > 0 && pendingBytes + c.length > KV_BATCH_BYTES) {
        if (!(await write({ part: 'kv', kv: { chunks: pending } }))) break;
        pending = [];
        pendingBytes = 0;
      }
      pending.push(c);
      pendingBytes += c.length;
      chunks++;
      bytes += c.length;
    }
    if (endedEarly === undefined) {
      if (pending.length > 0) await write({ part: 'kv', kv: { chunks: pending } });
      await write({ part: 'trailer', trailer: { chunks, bytes } });
      call.end();
    }
    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      ended,
      new Promise<'stalled'>((resolve) => {
        timer = setTimeout(() => resolve('stalled'), opts.stallTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (answer === 'stalled') {
      throw new PeerError('PEER_SNAPSHOT_FAILED', `snapshot to peer ${opts.peer}: no answer within ${opts.stallTimeoutMs} ms after sending it`);
    }
    if (answer) throw fail(answer, 'failed');
    return { chunks, bytes };
  } catch (err) {
    call.cancel();
    if (err instanceof PeerError) throw err;
    throw new PeerError('PEER_SNAPSHOT_FAILED', `snapshot to peer ${opts.peer}: ${(err as Error).message}`);
  } finally {
    opts.signal?.removeEventListener('abort', abort);
  }
}
