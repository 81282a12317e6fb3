// A member's Prometheus metrics under etcd's own names (so etcd dashboards and alerts work unchanged),
// served at GET /metrics on the client port. The member updates the MemberMetrics part (member/member-metrics.ts)
// as it runs; the client port updates the gRPC ones itself.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, exponentialBuckets } from 'prom-client';
import type { MemberMetrics } from '../member/member-metrics.js';
import type { GrpcLabels, GrpcMetrics } from '../grpc/call-metrics.js';
import { HotCounter } from '../grpc/call-metrics.js';
import { LoopDelayMonitor } from './loop-delay.js';

/**
 * Everything on /metrics. The MemberMetrics part (member/member-metrics.ts) is what the member updates as it runs:
 * hasLeader = etcd_server_has_leader, leaderChanges = etcd_server_leader_changes_seen_total,
 * proposalsCommitted/Applied = etcd_server_proposals_committed_total/_applied_total (gauges of the commit
 * and applied index, as in etcd despite the names), proposalsPending = etcd_server_proposals_pending,
 * proposalsFailed = etcd_server_proposals_failed_total, walFsyncSeconds = etcd_disk_wal_fsync_duration_seconds,
 * dbSize = etcd_mvcc_db_total_size_in_bytes.
 */
export interface EtcdMetrics extends MemberMetrics {
  readonly registry: Registry;
  /** etcd_server_is_leader: 1 while this member is the leader. */
  readonly isLeader: Gauge;
  /** etcd_server_is_learner: 1 while this member is a learner. */
  readonly isLearner: Gauge;
  /** etcd_server_id: 1, labelled with the member id in hex (server_id). */
  readonly serverId: Gauge<'server_id'>;
  /** etcd_mvcc_db_total_size_in_use_in_bytes: bytes logically in use. */
  readonly dbSizeInUse: Gauge;
  /** etcd_debugging_mvcc_keys_total: keys in the key index. */
  readonly keysTotal: Gauge;
  /** etcd_network_peer_round_trip_time_seconds{To}: peer round-trip times (To = peer id in hex). */
  readonly peerRoundTripSeconds: Histogram<'To'>;
  /** etcd_debugging_mvcc_watch_stream_total: open Watch streams (kept by the client port). */
  readonly watchStreams: Gauge;
  readonly grpc: GrpcMetrics;
}

export interface MetricsOptions {
  /** The version etcd_server_version reports. */
  readonly serverVersion?: string;
  /**
   * Add Node's process metrics (process_*, nodejs_*), as etcd exposes Go's process_* ones, and the
   * member's event-loop delay (setpoint_event_loop_*, embed/loop-delay.ts).
   */
  readonly processMetrics?: boolean;
}

/** The loop-delay summary, in Prometheus' summary form; prom-client's own Summary takes observations one by one. */
function loopDelaySummary(monitor: LoopDelayMonitor): object {
  const name = 'setpoint_event_loop_delay_seconds';
  const help = 'Event-loop delay since the member started (monitorEventLoopDelay, 10 ms resolution).';
  return {
    name,
    help,
    type: 'summary',
    aggregator: 'sum',
    get: () => {
      const w = monitor.summary();
      return {
        name,
        help,
        type: 'summary',
        aggregator: 'sum',
        values: [
          ...w.quantiles.map(([quantile, value]) => ({ labels: { quantile }, value })),
          { metricName: `${name}_sum`, labels: {}, value: w.sum },
          { metricName: `${name}_count`, labels: {}, value: w.count },
        ],
      };
    },
    reset: () => undefined,
  };
}

function loopDelayMetrics(registry: Registry): void {
  const monitor = new LoopDelayMonitor();
  registry.registerMetric(loopDelaySummary(monitor) as Parameters<Registry['registerMetric']>[0]);
  new Gauge({
    name: 'setpoint_event_loop_delay_max_seconds',
    help: 'The largest event-loop delay (wall clock, 1 ms resolution while the loop is busy) since the previous scrape.',
    registers: [registry],
    collect() {
      this.set(monitor.max('delay'));
    },
  });
  new Gauge({
    name: 'setpoint_event_loop_held_max_seconds',
    help: "The longest the member's own running held its event loop since the previous scrape (time the loop's thread ran; waiting for a CPU is not counted).",
    registers: [registry],
    collect() {
      this.set(monitor.max('held'));
    },
  });
}

export function createMetrics(opts: MetricsOptions = {}): EtcdMetrics {
  const registry = new Registry();
  const registers = [registry];
  const grpcLabels: GrpcLabels[] = ['grpc_type', 'grpc_service', 'grpc_method'];
  const gauge = (name: string, help: string): Gauge => new Gauge({ name, help, registers });
  // Hot counters are flushed whenever one of the gRPC counters is read (prom-client calls collect first).
  const hot = new Set<HotCounter>();
  const collect = (): void => {
    for (const h of hot) h.flush();
  };
  const counter = (name: string, help: string): Counter => new Counter({ name, help, registers });
  const grpcCounter = (name: string, help: string): Counter<GrpcLabels> => new Counter({ name, help, labelNames: grpcLabels, registers, collect });
  const byteCounter = (name: string, help: string): Counter => new Counter({ name, help, registers, collect });

  const version = new Gauge({
    name: 'etcd_server_version',
    help: "Which version is running. 1 for 'server_version' label with current version.",
    labelNames: ['server_version'],
    registers,
  });
  version.set({ server_version: opts.serverVersion ?? '3.4.23' }, 1);
  if (opts.processMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
    loopDelayMetrics(registry);
  }

  return {
    registry,
    hasLeader: gauge('etcd_server_has_leader', 'Whether or not a leader exists. 1 is existence, 0 is not.'),
    leaderChanges: counter('etcd_server_leader_changes_seen_total', 'The number of leader changes seen.'),
    proposalsCommitted: gauge('etcd_server_proposals_committed_total', 'The total number of consensus proposals committed.'),
    proposalsApplied: gauge('etcd_server_proposals_applied_total', 'The total number of consensus proposals applied.'),
    proposalsPending: gauge('etcd_server_proposals_pending', 'The current number of pending proposals to commit.'),
    proposalsFailed: counter('etcd_server_proposals_failed_total', 'The total number of failed proposals seen.'),
    walFsyncSeconds: new Histogram({
      name: 'etcd_disk_wal_fsync_duration_seconds',
      help: 'The latency distributions of fsync called by WAL.',
      buckets: exponentialBuckets(0.001, 2, 14),
      registers,
    }),
    dbSize: gauge('etcd_mvcc_db_total_size_in_bytes', 'Total size of the underlying database physically allocated in bytes.'),
    isLeader: gauge('etcd_server_is_leader', 'Whether or not this member is a leader. 1 if is, 0 otherwise.'),
    isLearner: gauge('etcd_server_is_learner', 'Whether or not this member is a learner. 1 if is, 0 otherwise.'),
    serverId: new Gauge({
      name: 'etcd_server_id',
      help: "Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.",
      labelNames: ['server_id'],
      registers,
    }),
    dbSizeInUse: gauge('etcd_mvcc_db_total_size_in_use_in_bytes', 'Total size of the underlying database logically in use in bytes.'),
    keysTotal: gauge('etcd_debugging_mvcc_keys_total', 'Total number of keys.'),
    peerRoundTripSeconds: new Histogram({
      name: 'etcd_network_peer_round_trip_time_seconds',
      help: 'Round-Trip-Time histogram between peers',
      labelNames: ['To'],
      buckets: exponentialBuckets(0.0001, 2, 14),
      registers,
    }),
    watchStreams: gauge('etcd_debugging_mvcc_watch_stream_total', 'Total number of watch streams.'),
    grpc: {
      started: grpcCounter('grpc_server_started_total', 'Total number of RPCs started on the server.'),
      handled: new Counter({
        name: 'grpc_server_handled_total',
        help: 'Total number of RPCs completed on the server, regardless of success or failure.',
        labelNames: [...grpcLabels, 'grpc_code'],
        registers,
        collect,
      }),
      msgReceived: grpcCounter('grpc_server_msg_received_total', 'Total number of RPC stream messages received on the server.'),
      msgSent: grpcCounter('grpc_server_msg_sent_total', 'Total number of gRPC stream messages sent by the server.'),
      receivedBytes: byteCounter('etcd_network_client_grpc_received_bytes_total', 'The total number of bytes received from grpc clients.'),
      sentBytes: byteCounter('etcd_network_client_grpc_sent_bytes_total', 'The total number of bytes sent to grpc clients.'),
      hot(c: { inc(by: number): void }): HotCounter {
        const h = new HotCounter(c);
        hot.add(h);
        return h;
      },
    },
  };
}
