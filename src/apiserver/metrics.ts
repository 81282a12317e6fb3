// The API server's Prometheus metrics under Kubernetes' names and label sets, so kube-apiserver
// dashboards and alerts read them unchanged: apiserver_request_total, apiserver_request_duration_seconds,
// apiserver_current_inflight_requests, apiserver_longrunning_requests, apiserver_storage_objects.
// Label values come only from the request's parsed shape and registered resources, never from raw
// input, so a client cannot grow the label space.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { InflightLimiter } from './http/inflight.js';
import type { RequestInfo } from './request-info.js';

const REQUEST_LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
type RequestLabel = (typeof REQUEST_LABELS)[number];

/** kube-apiserver's buckets for apiserver_request_duration_seconds. */
const DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT']);

/** What a finished request is counted under. */
export interface RequestObservation {
  readonly info: RequestInfo;
  readonly method: string;
  readonly contentType: string | undefined;
  readonly query: URLSearchParams;
  /** The resource was found among the registered ones (else its names are not used as label values). */
  readonly known: boolean;
  /** For health endpoints: the path, as Kubernetes labels them (subresource="/readyz"). */
  readonly nonResourcePath?: string;
  readonly code: number;
  readonly seconds: number;
}

/** Kubernetes' reported verb: LIST vs GET by scope, WATCH, APPLY for apply patches, `other` for odd methods. */
export function metricVerb(info: RequestInfo, method: string, contentType: string | undefined): string {
  if (info.verb === 'watch') return 'WATCH';
  const m = method.toUpperCase();
  if (!KNOWN_METHODS.has(m)) return 'other';
  if (m === 'GET' || m === 'HEAD') return info.isResourceRequest && info.name === '' ? 'LIST' : 'GET';
  if (m === 'PATCH' && contentType === 'application/apply-patch+yaml') return 'APPLY';
  return m;
}

/** Kubernetes' CleanScope. */
export function metricScope(info: RequestInfo): string {
  if (info.name !== '' || info.verb === 'create') return 'resource';
  if (info.namespace !== '') return 'namespace';
  if (info.isResourceRequest) return 'cluster';
  return '';
}

/** dryRun as a label: `All` or nothing (any other value is a 400 later, and must not mint label values). */
function dryRunLabel(query: URLSearchParams): string {
  const v = query.getAll('dryRun');
  return v.length > 0 && v.every((x) => x === 'All') ? 'All' : '';
}

export class ApiServerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<RequestLabel | 'code'>;
  private readonly durations: Histogram<RequestLabel>;
  private readonly inflight: Gauge<'request_kind'>;
  private readonly longRunning: Gauge<RequestLabel>;
  private readonly storageObjects: Gauge<'resource'>;
  private watermarkTimer: NodeJS.Timeout | undefined;

  constructor(opts: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: [...REQUEST_LABELS, 'code'],
      registers,
    });
    this.durations = new Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: [...REQUEST_LABELS],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.inflight = new Gauge({
      name: 'apiserver_current_inflight_requests',
      help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'],
      registers,
    });
    this.longRunning = new Gauge({
      name: 'apiserver_longrunning_requests',
      help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.',
      labelNames: [...REQUEST_LABELS],
      registers,
    });
    this.storageObjects = new Gauge({
      name: 'apiserver_storage_objects',
      help: 'Number of stored objects at the time of last check split by kind.',
      labelNames: ['resource'],
      registers,
    });
    if (opts.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** Publishes the in-flight watermarks once a second, as Kubernetes does. */
  watchInflight(limiter: InflightLimiter): void {
    const publish = (): void => {
      this.inflight.set({ request_kind: 'readOnly' }, limiter.takeWatermark('readOnly'));
      this.inflight.set({ request_kind: 'mutating' }, limiter.takeWatermark('mutating'));
    };
    publish();
    this.watermarkTimer = setInterval(publish, 1000);
    this.watermarkTimer.unref();
  }

  stop(): void {
    clearInterval(this.watermarkTimer);
  }

  private labels(o: Omit<RequestObservation, 'code' | 'seconds'>): Record<RequestLabel, string> {
    const { info, known } = o;
    return {
      verb: metricVerb(info, o.method, o.contentType),
      dry_run: dryRunLabel(o.query),
      group: known ? info.apiGroup : '',
      version: known ? info.apiVersion : '',
      resource: known ? info.resource : '',
      subresource: known ? info.subresource : (o.nonResourcePath ?? ''),
      scope: known ? metricScope(info) : '',
      component: 'apiserver',
    };
  }

  observe(o: RequestObservation): void {
    const l = this.labels(o);
    this.requests.inc({ ...l, code: String(o.code) });
    // A watch lasts as long as its timeout: its length says nothing about the server's latency.
    if (l.verb !== 'WATCH') this.durations.observe(l, o.seconds);
  }

  /** Counts a long-running request until the returned function is called. */
  longRunningStarted(o: Omit<RequestObservation, 'code' | 'seconds'>): () => void {
    const l = this.labels(o);
    this.longRunning.inc(l);
    return () => this.longRunning.dec(l);
  }

  /** apiserver_storage_objects, fed by the registry: `resource` is `pods` or `deployments.apps`. */
  setStorageObjects(resource: string, count: number): void {
    this.storageObjects.set({ resource }, count);
  }
}
