// Timings and gRPC channel settings of the peer transport, all derived from the election timeout: a
// peer that stops answering (SIGSTOP, a partition that drops packets but keeps the connection open) must
// be noticed within a few election timeouts, and no connection may wait on a dead peer forever.
import { Client } from '@grpc/grpc-js';
import type { ChannelOptions } from '@grpc/grpc-js';
import { channelCredentials } from './credentials.js';
import type { PeerTls, PeerUrl } from './credentials.js';
import { MAX_GRPC_MESSAGE_BYTES } from './proto.js';

export interface PeerTimings {
  readonly electionTimeoutMs: number;
  /** HTTP/2 ping interval on an otherwise quiet connection, and how long a ping may go unanswered. */
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  /** A new stream not accepted by the peer within this is given up (a handshake into a blackhole). */
  readonly connectTimeoutMs: number;
  /** Reconnect backoff: doubles from min to max, each wait jittered to [50%, 100%]. */
  readonly backoffMinMs: number;
  readonly backoffMaxMs: number;
  readonly probeIntervalMs: number;
  readonly probeTimeoutMs: number;
  /** A peer is active while its stream is up and a round trip succeeded within this window. */
  readonly activeWindowMs: number;
  /** Forwarded lease calls: etcd's request timeout, 5 s plus two election timeouts. */
  readonly leaseCallTimeoutMs: number;
  /**
   * A forwarded promotion: the leader answers once the change has applied or its own request timeout
   * (the lease call's) has passed, so one more election timeout lets its answer, even a timeout, arrive.
   */
  readonly promoteCallTimeoutMs: number;
  /** A snapshot whose next write, or final answer, takes longer than this is given up. */
  readonly snapshotStallTimeoutMs: number;
}

export function peerTimings(electionTimeoutMs: number, overrides: Partial<PeerTimings> = {}): PeerTimings {
  const e = Math.max(10, electionTimeoutMs);
  // A ping every half election timeout, and two election timeouts to answer it: a silent peer is cut off
  // within 2.5 election timeouts (etcd waits 5 s for a read on its peer streams). Half an election
  // timeout to answer was too tight for Node: one apply that holds the event loop for a second (a delete
  // of 150,000 keys under load) cut every peer connection of the member and lost the proposals in flight.
  const keepaliveTimeMs = overrides.keepaliveTimeMs ?? Math.max(50, Math.floor(e / 2));
  const keepaliveTimeoutMs = overrides.keepaliveTimeoutMs ?? Math.max(50, 2 * e);
  const probeIntervalMs = overrides.probeIntervalMs ?? Math.min(1000, Math.max(50, Math.floor(e / 2)));
  const probeTimeoutMs = overrides.probeTimeoutMs ?? e;
  return {
    electionTimeoutMs: e,
    keepaliveTimeMs,
    keepaliveTimeoutMs,
    connectTimeoutMs: overrides.connectTimeoutMs ?? Math.max(1000, 2 * e),
    backoffMinMs: overrides.backoffMinMs ?? 50,
    backoffMaxMs: overrides.backoffMaxMs ?? 2000,
    probeIntervalMs,
    probeTimeoutMs,
    activeWindowMs: overrides.activeWindowMs ?? probeTimeoutMs + 2 * probeIntervalMs,
    leaseCallTimeoutMs: overrides.leaseCallTimeoutMs ?? 5000 + 2 * e,
    promoteCallTimeoutMs: overrides.promoteCallTimeoutMs ?? 5000 + 3 * e,
    snapshotStallTimeoutMs: overrides.snapshotStallTimeoutMs ?? Math.max(30_000, 10 * e),
  };
}

/** Settings shared by our channels and our server: same keepalive, same message limit. */
function commonOptions(t: PeerTimings): ChannelOptions {
  return {
    'grpc.keepalive_time_ms': t.keepaliveTimeMs,
    'grpc.keepalive_timeout_ms': t.keepaliveTimeoutMs,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.max_send_message_length': MAX_GRPC_MESSAGE_BYTES,
    'grpc.max_receive_message_length': MAX_GRPC_MESSAGE_BYTES,
  };
}

export function serverOptions(t: PeerTimings): ChannelOptions {
  return commonOptions(t);
}

/**
 * A fresh channel (its own TCP connection) to one peer URL. Each stream attempt and each snapshot gets
 * its own: grpc-js puts no time limit on an HTTP/2 handshake, so a connection opened into a blackhole
 * never recovers by itself; closing the channel and dialling again does.
 */
export function newPeerClient(url: PeerUrl, tls: PeerTls | undefined, t: PeerTimings): Client {
  return new Client(url.target, channelCredentials(url, tls), {
    ...commonOptions(t),
    'grpc.initial_reconnect_backoff_ms': t.backoffMinMs,
    'grpc.max_reconnect_backoff_ms': t.backoffMaxMs,
    // Retries would buffer our writes inside grpc-js and acknowledge them before they reach the wire.
    'grpc.enable_retries': 0,
    // Our own subchannel, so closing this client really closes its connection.
    'grpc.use_local_subchannel_pool': 1,
    // Nothing reads channelz; on, it costs bookkeeping on every call. (Servers keep it: with it off,
    // grpc-js's forceShutdown does not cut their connections.)
    'grpc.enable_channelz': 0,
  });
}

/** Exponential backoff with jitter: attempt 1 waits about min, each further attempt twice as long, up to max. */
export function backoffDelay(t: PeerTimings, attempt: number, random: () => number = Math.random): number {
  const base = Math.min(t.backoffMaxMs, t.backoffMinMs * 2 ** Math.max(0, Math.min(30, attempt - 1)));
  return Math.round(base * (0.5 + 0.5 * random()));
}
