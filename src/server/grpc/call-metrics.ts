// go-grpc-prometheus's per-call counters, which etcd's /metrics carries (grpc_server_started_total,
// grpc_server_handled_total by grpc_code, messages received and sent), counted the same whichever path
// serves a call. The counters themselves live in the member's registry (embed/metrics.ts).
import type { Counter } from 'prom-client';

/** go-grpc-prometheus's labels. */
export type GrpcLabels = 'grpc_type' | 'grpc_service' | 'grpc_method';
export type GrpcType = 'unary' | 'client_stream' | 'server_stream' | 'bidi_stream';

/** A prom-client counter, or a labelled child of one. */
export interface CounterLike {
  inc(by: number): void;
}

export interface GrpcMetrics {
  /** grpc_server_started_total: RPCs started, by type, service and method. */
  readonly started: Counter<GrpcLabels>;
  /** grpc_server_handled_total: RPCs completed, with their status as grpc_code ("OK", "InvalidArgument", …). */
  readonly handled: Counter<GrpcLabels | 'grpc_code'>;
  /** grpc_server_msg_received_total: stream messages received (one per unary call). */
  readonly msgReceived: Counter<GrpcLabels>;
  /** grpc_server_msg_sent_total: stream messages sent (one per successful unary call). */
  readonly msgSent: Counter<GrpcLabels>;
  /** etcd_network_client_grpc_received_bytes_total: request bytes read from clients. */
  readonly receivedBytes: Counter;
  /** etcd_network_client_grpc_sent_bytes_total: response bytes sent to clients. */
  readonly sentBytes: Counter;
  /** Wraps a counter (or labelled child) of this set for hot paths: see HotCounter. */
  hot(counter: CounterLike): HotCounter;
}

/**
 * A counter bumped on hot paths (every gRPC call, message and byte count). prom-client's inc() validates
 * and hashes on each call; this adds to a plain number and hands the sum over whenever /metrics is read.
 */
export class HotCounter {
  private pending = 0;

  constructor(private readonly counter: CounterLike) {}

  inc(by = 1): void {
    this.pending += by;
  }

  flush(): void {
    if (this.pending === 0) return;
    this.counter.inc(this.pending);
    this.pending = 0;
  }
}

/** Go's names for gRPC codes, as go-grpc-prometheus writes them in grpc_code. */
const CODE_NAMES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/**
 * One method's counters. prom-client hashes a label set on every inc(), so the labelled children are
 * looked up once, when the method's handler is built, and counted through HotCounters.
 */
export class MethodCounters {
  private readonly labels: Record<GrpcLabels, string>;
  readonly started: HotCounter;
  readonly msgReceived: HotCounter;
  readonly msgSent: HotCounter;
  private readonly handledByCode = new Map<number, HotCounter>();

  constructor(
    private readonly metrics: GrpcMetrics,
    type: GrpcType,
    service: string,
    method: string,
  ) {
    this.labels = { grpc_type: type, grpc_service: service, grpc_method: method };
    this.started = metrics.hot(metrics.started.labels(this.labels));
    this.msgReceived = metrics.hot(metrics.msgReceived.labels(this.labels));
    this.msgSent = metrics.hot(metrics.msgSent.labels(this.labels));
  }

  handled(code: number): void {
    let c = this.handledByCode.get(code);
    if (!c) {
      c = this.metrics.hot(this.metrics.handled.labels({ ...this.labels, grpc_code: CODE_NAMES[code] ?? String(code) }));
      this.handledByCode.set(code, c);
    }
    c.inc();
  }
}

/** One call's counters; `done` counts once, whichever way the call ends. */
export class CallTracker {
  private finished = false;

  constructor(private readonly counters: MethodCounters) {
    counters.started.inc();
  }

  received(): void {
    this.counters.msgReceived.inc();
  }

  sent(): void {
    this.counters.msgSent.inc();
  }

  done(code: number): void {
    if (this.finished) return;
    this.finished = true;
    this.counters.handled(code);
  }
}
