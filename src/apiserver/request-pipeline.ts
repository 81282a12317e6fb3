// One request through the shell, in kube-apiserver's filter order: RequestInfo, the request deadline
// (?timeout=), authentication (401, or anonymous for the public paths), the max-in-flight limits (429),
// then either a built-in endpoint or a resource route to its handler — under the deadline (504) or, for
// a watch, its randomized length. Metrics count every request when it ends.
import { authorizeNode } from './authz/node-authorizer.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Authenticator } from './authn/authenticator.js';
import { ANONYMOUS, type UserInfo } from './authn/user-info.js';
import { parseDurationMs } from './duration.js';
import { builtinReply, healthEndpointOf, isPublicPath, type BuiltinEndpoints } from './endpoints/builtin.js';
import { httpErrorReply, type Reply } from './endpoints/reply.js';
import type { ApiRequest } from './handler.js';
import { BodyReader } from './http/body-reader.js';
import type { InflightLimiter } from './http/inflight.js';
import { flatHeaders, isHttp2, tlsSocketOf, type NodeRequest, type NodeResponse } from './http/node-http.js';
import { peerCertificate } from './http/peer-certificate.js';
import { ResponseWriter } from './http/response-writer.js';
import { mediaTypeOf, negotiate, parseAccept } from './media-type.js';
import type { ApiServerMetrics } from './metrics.js';
import { RequestInfoError, isLongRunning, isMutating, parseRequestInfo, type RequestInfo } from './request-info.js';
import { routeResource } from './resource-route.js';
import type { ResourceRegistry, SubresourceDescriptor, RegisteredResource } from './resource-registry.js';
import type { StorageErrorContext, StorageOperation } from './storage-status.js';
import { StorageError } from './storage/interface.js';
import { StatusError, statuses } from './status.js';

export interface PipelineLimits {
  readonly requestTimeoutMs: number;
  readonly minRequestTimeoutSeconds: number;
  readonly maxRequestBodyBytes: number;
  /** Longest pause between two chunks of a request body. */
  readonly bodyIdleTimeoutMs: number;
  /** A streamed response whose client stops reading for this long is closed. */
  readonly streamStallTimeoutMs: number;
}

export interface PipelineDeps {
  readonly registry: ResourceRegistry;
  readonly authenticator: Authenticator;
  readonly anonymousAuth: boolean;
  readonly limiter: InflightLimiter;
  readonly metrics: ApiServerMetrics;
  readonly builtin: BuiltinEndpoints;
  readonly limits: PipelineLimits;
  readonly log: Logger;
  /** Uniform in [0, 1): spreads watch lengths (injectable so tests can pin them). */
  readonly random: () => number;
}

const OPERATION: Record<string, StorageOperation> = {
  get: 'get',
  list: 'list',
  watch: 'watch',
  create: 'create',
  update: 'update',
  patch: 'update',
  delete: 'delete',
  deletecollection: 'delete',
};

function writeReply(w: ResponseWriter, reply: Reply): void {
  for (const [k, v] of Object.entries(reply.headers ?? {})) w.setHeader(k, v);
  w.raw(reply.code, reply.contentType, reply.body);
}

/** The requests in progress, so stopping the server can end them (watches at once, the rest in time). */
export class RequestTracker {
  private readonly live = new Map<AbortController, Promise<void>>();
  private readonly longRunning = new Set<AbortController>();

  add(ctl: AbortController, done: Promise<void>): void {
    this.live.set(ctl, done);
    void done.finally(() => {
      this.live.delete(ctl);
      this.longRunning.delete(ctl);
    });
  }

  markLongRunning(ctl: AbortController): void {
    this.longRunning.add(ctl);
  }

  /**
   * Ends watches and streams now, lets other requests finish for up to `graceMs`, then aborts what is
   * left. Resolves when every request has ended or the grace is over.
   */
  async drain(graceMs: number): Promise<void> {
    for (const ctl of this.longRunning) ctl.abort(new Error('the server is stopping'));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.live.values()]), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    for (const ctl of this.live.keys()) ctl.abort(new Error('the server is stopping'));
  }

  get size(): number {
    return this.live.size;
  }
}

export class RequestPipeline {
  readonly tracker = new RequestTracker();

  constructor(private readonly deps: PipelineDeps) {}

  /** The server's request listener. */
  handle(req: NodeRequest, res: NodeResponse): void {
    const ctl = new AbortController();
    const done = this.serve(req, res, ctl).catch((err: unknown) => {
      this.deps.log.error({ err }, 'request failed in the shell');
      if (!res.headersSent && !res.destroyed) {
        res.statusCode = 500;
        res.end();
      }
    });
    this.tracker.add(ctl, done);
  }

  private async serve(req: NodeRequest, res: NodeResponse, ctl: AbortController): Promise<void> {
    const { deps } = this;
    const received = Date.now();
    const method = (req.method ?? 'GET').toUpperCase();
    const headers = flatHeaders(req);
    // Made once the deadline is known; until then no body has been read.
    const bodyRef: { reader?: BodyReader } = {};
    const w = new ResponseWriter(req, res, {
      auditId: randomUUID(),
      stallTimeoutMs: deps.limits.streamStallTimeoutMs,
      bodyConsumed: () => bodyRef.reader?.complete ?? false,
      onClosed: (reason) => ctl.abort(reason),
    });
    res.once('close', () => ctl.abort(new Error('the client went away')));

    let url: URL;
    let path: string;
    try {
      url = new URL(req.url ?? '/', 'https://apiserver');
      path = decodeURIComponent(url.pathname);
    } catch {
      w.status(statuses.badRequest(`invalid request URL ${JSON.stringify(req.url ?? '')}`));
      return;
    }
    const query = url.searchParams;
    const contentType = mediaTypeOf(headers['content-type']);
    let info: RequestInfo;
    try {
      info = parseRequestInfo(method, path, query);
    } catch (e) {
      if (!(e instanceof RequestInfoError)) throw e;
      w.status(statuses.internalError(`failed to create RequestInfo: ${e.message}`));
      return;
    }
    let known = false;
    let userName = '';
    res.once('close', () => {
      const seconds = (Date.now() - received) / 1000;
      const health = healthEndpointOf(path);
      deps.metrics.observe({ info, method, contentType, query, known, ...(health ? { nonResourcePath: `/${health}` } : {}), code: res.statusCode, seconds });
      // Kubernetes' httplog line, at debug: who asked what, the answer, how long it took.
      deps.log.debug({ verb: info.verb, uri: req.url, user: userName, code: res.statusCode, ms: Math.round(seconds * 1000), proto: isHttp2(req) ? 'HTTP/2' : 'HTTP/1.1' }, 'request');
    });

    const longRunning = isLongRunning(info);
    if (longRunning) this.tracker.markLongRunning(ctl);
    let timeoutMs = deps.limits.requestTimeoutMs;
    const t = query.get('timeout');
    if (!longRunning && t !== null && t !== '') {
      try {
        const asked = parseDurationMs(t);
        if (asked > 0 && asked < timeoutMs) timeoutMs = asked;
      } catch (e) {
        w.status(statuses.badRequest(`invalid timeout specified in the request URL - ${(e as Error).message}`));
        return;
      }
    }
    const deadline = longRunning ? undefined : received + timeoutMs;
    const body = new BodyReader(req, { limit: deps.limits.maxRequestBodyBytes, idleMs: deps.limits.bodyIdleTimeoutMs, ...(deadline !== undefined ? { deadline } : {}) });
    bodyRef.reader = body;

    const socket = tlsSocketOf(req);
    const cert = socket ? peerCertificate(socket) : undefined;
    const auth = deps.authenticator.authenticate({ ...(headers.authorization !== undefined ? { authorization: headers.authorization } : {}), ...(cert ? { certificate: cert } : {}) });
    let user: UserInfo;
    if (auth.kind === 'user') {
      user = auth.user;
      // As Kubernetes does: nothing past authentication gets to see (or log, or forward) the token.
      delete headers.authorization;
    }
    else if (auth.kind === 'anonymous' && deps.anonymousAuth && isPublicPath(path)) user = ANONYMOUS;
    else {
      if (auth.kind === 'failed') deps.log.debug({ reasons: auth.reasons, path }, 'unable to authenticate the request');
      w.status(statuses.unauthorized());
      return;
    }

    userName = user.name;
    // Health probes are exempt, as the probes flow schema exempts them from priority and fairness.
    let release: (() => void) | undefined;
    if (!longRunning && healthEndpointOf(path) === undefined) {
      release = deps.limiter.tryAcquire(isMutating(info) ? 'mutating' : 'readOnly', user);
      if (release === undefined) {
        writeReply(w, { ...httpErrorReply(429, 'Too many requests, please try again later.'), headers: { 'X-Content-Type-Options': 'nosniff', 'Retry-After': '1' } });
        return;
      }
    }
    try {
      if (!info.isResourceRequest) {
        const reply = await builtinReply(deps.builtin, { method, path, query, accept: parseAccept(headers.accept), ifNoneMatch: headers['if-none-match'] });
        writeReply(w, reply);
        return;
      }
      const route = routeResource(deps.registry, info);
      if (route.kind === 'error') {
        w.status(route.status);
        return;
      }
      known = true;
      const denied = authorizeNode(user, info);
      if (denied !== undefined) {
        w.status(denied);
        return;
      }
      await this.serveResource({ w, ctl, info, method, query, headers, contentType, user, body, deadline, longRunning, registered: route.registered, subresource: route.subresource });
    } finally {
      release?.();
    }
  }

  private async serveResource(r: {
    w: ResponseWriter;
    ctl: AbortController;
    info: RequestInfo;
    method: string;
    query: URLSearchParams;
    headers: Record<string, string>;
    contentType: string | undefined;
    user: UserInfo;
    body: BodyReader;
    deadline: number | undefined;
    longRunning: boolean;
    registered: RegisteredResource;
    subresource: SubresourceDescriptor | undefined;
  }): Promise<void> {
    const { deps } = this;
    const { w, ctl, info, registered } = r;
    const d = registered.descriptor;
    const storageCtx: StorageErrorContext = { resource: { group: d.group, resource: d.resource }, name: info.name, operation: OPERATION[info.verb] ?? 'get' };
    const accept = parseAccept(r.headers.accept);
    const log = deps.log.child({ verb: info.verb, resource: d.resource, ...(info.namespace ? { namespace: info.namespace } : {}), ...(info.name ? { name: info.name } : {}) });
    let watchTimeoutMs: number | undefined;
    if (info.verb === 'watch') {
      const asked = Number(r.query.get('timeoutSeconds') ?? '');
      watchTimeoutMs = Number.isSafeInteger(asked) && asked > 0 ? asked * 1000 : deps.limits.minRequestTimeoutSeconds * 1000 * (1 + deps.random());
    }
    const body = r.body;
    const request: ApiRequest = {
      info,
      resource: d,
      ...(r.subresource ? { subresource: r.subresource } : {}),
      user: r.user,
      method: r.method,
      query: r.query,
      headers: r.headers,
      ...(r.contentType !== undefined ? { contentType: r.contentType } : {}),
      accept,
      negotiate: (offers) => negotiate(accept, offers),
      body: () => body.read(),
      signal: ctl.signal,
      ...(r.deadline !== undefined ? { deadline: r.deadline } : {}),
      ...(watchTimeoutMs !== undefined ? { watchTimeoutMs } : {}),
      log,
    };
    w.storageContext = storageCtx;
    let timer: NodeJS.Timeout | undefined;
    let endLongRunning: (() => void) | undefined;
    if (r.deadline !== undefined) {
      timer = setTimeout(() => {
        if (!w.sent) {
          w.status(statuses.timeout('request did not complete within requested timeout - context deadline exceeded'));
          w.detach();
        }
        ctl.abort(new Error('the request timed out'));
      }, Math.max(0, r.deadline - Date.now()));
    } else {
      endLongRunning = deps.metrics.longRunningStarted({ info, method: r.method, contentType: r.contentType, query: r.query, known: true });
      if (watchTimeoutMs !== undefined) {
        timer = setTimeout(() => {
          ctl.abort(new Error('the watch reached its timeout'));
          w.endStream();
        }, watchTimeoutMs);
      }
    }
    try {
      await registered.handler.serve(request, w);
      if (!w.sent && !ctl.signal.aborted) {
        log.error('the handler answered nothing');
        w.status(statuses.internalError('the handler sent no response'));
      }
    } catch (err) {
      if (!(err instanceof StatusError) && !(err instanceof StorageError)) log.error({ err }, 'handler failed');
      if (!w.sent) w.error(err);
    } finally {
      clearTimeout(timer);
      endLongRunning?.();
      w.endStream();
    }
  }
}
