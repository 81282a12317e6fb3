// One AdmissionReview v1 round trip to a webhook over HTTPS: POST to clientConfig.url (with Kubernetes'
// `?timeout=` hint), trusting clientConfig.caBundle (else the system's roots), bounded by the webhook's
// timeout and a cap on the response body, on a keep-alive connection per CA. Every way it can fail is a
// WebhookCallError, which the dispatcher turns into the webhook's failurePolicy; messages read as
// kube-apiserver's (`Post "https://…": context deadline exceeded`).
import { Agent, request } from 'node:https';
import type { Webhook } from './webhook-config.js';

/** A failure to get a usable answer from a webhook (not a denial). */
export class WebhookCallError extends Error {
  readonly code = 'WEBHOOK_CALL_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'WebhookCallError';
  }
}

/** The parts of AdmissionReview.response the dispatcher uses, checked. */
export interface ReviewResponse {
  readonly allowed: boolean;
  readonly status?: Record<string, unknown>;
  /** The JSON patch's bytes, decoded from base64. */
  readonly patch?: Buffer;
  readonly patchType?: string;
  readonly warnings: readonly string[];
}

/** Largest AdmissionReview answer read from a webhook: what the API server takes as a request body. */
export const DEFAULT_MAX_WEBHOOK_RESPONSE_BYTES = 3 * 1024 * 1024;

type Obj = Record<string, unknown>;

function rec(v: unknown): Obj | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}

/** VerifyAdmissionResponse's rules, with its words. */
export function verifyResponse(body: unknown, uid: string, mutating: boolean): ReviewResponse {
  const review = rec(body);
  const gvk = `${typeof review?.['apiVersion'] === 'string' ? review['apiVersion'] : ''}, Kind=${typeof review?.['kind'] === 'string' ? review['kind'] : ''}`;
  const r = rec(review?.['response']);
  if (r === undefined) throw new WebhookCallError('webhook response was absent');
  if (r['uid'] !== uid) throw new WebhookCallError(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(typeof r['uid'] === 'string' ? r['uid'] : '')}`);
  if (gvk !== 'admission.k8s.io/v1, Kind=AdmissionReview') throw new WebhookCallError(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gvk}`);
  const patchText = typeof r['patch'] === 'string' ? r['patch'] : '';
  const patchType = typeof r['patchType'] === 'string' ? r['patchType'] : '';
  if (patchText !== '' && patchType === '') throw new WebhookCallError('webhook returned response.patch but not response.patchType');
  if (patchType !== '' && patchText === '') throw new WebhookCallError('webhook returned response.patchType but not response.patch');
  if (!mutating && patchText !== '') throw new WebhookCallError('validating webhook may not return response.patch');
  if (!mutating && patchType !== '') throw new WebhookCallError('validating webhook may not return response.patchType');
  const status = rec(r['status']);
  const warnings = Array.isArray(r['warnings']) ? r['warnings'].filter((w): w is string => typeof w === 'string') : [];
  return {
    allowed: r['allowed'] === true,
    ...(status !== undefined ? { status } : {}),
    ...(patchText !== '' ? { patch: Buffer.from(patchText, 'base64'), patchType } : {}),
    warnings,
  };
}

function goDialError(e: NodeJS.ErrnoException, url: URL): string {
  const hostPort = `${url.hostname}:${url.port || '443'}`;
  if (e.code === 'ECONNREFUSED') return `dial tcp ${hostPort}: connect: connection refused`;
  if (e.code === 'ENOTFOUND') return `dial tcp: lookup ${url.hostname}: no such host`;
  if (e.code === 'ECONNRESET') return 'read: connection reset by peer';
  return e.message;
}

export class WebhookClient {
  private readonly agents = new Map<string, Agent>();

  constructor(private readonly maxResponseBytes = DEFAULT_MAX_WEBHOOK_RESPONSE_BYTES) {}

  private agent(caPem: string | undefined): Agent {
    const k = caPem ?? '';
    let a = this.agents.get(k);
    if (a === undefined) {
      a = new Agent({ keepAlive: true, maxSockets: 32, ...(caPem !== undefined ? { ca: caPem } : {}) });
      this.agents.set(k, a);
    }
    return a;
  }

  /** Posts `review` and answers the verified response. `signal`: the API request was abandoned. */
  call(hook: Webhook, review: Obj, uid: string, signal: AbortSignal): Promise<ReviewResponse> {
    if (hook.unusable !== undefined || hook.url === undefined) return Promise.reject(new WebhookCallError(hook.unusable ?? 'no clientConfig.url'));
    let url: URL;
    try {
      url = new URL(hook.url);
    } catch {
      return Promise.reject(new WebhookCallError(`invalid clientConfig.url ${JSON.stringify(hook.url)}`));
    }
    if (url.protocol !== 'https:') return Promise.reject(new WebhookCallError(`clientConfig.url ${JSON.stringify(hook.url)} must be https`));
    url.searchParams.set('timeout', `${Math.ceil(hook.timeoutMs / 1000)}s`);
    const shown = `Post ${JSON.stringify(url.toString())}`;
    const body = Buffer.from(JSON.stringify(review));
    return new Promise<ReviewResponse>((resolve, reject) => {
      let settled = false;
      const finish = (err: Error | undefined, value?: ReviewResponse): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (err !== undefined) reject(err);
        else if (value !== undefined) resolve(value);
      };
      const req = request(url, {
        method: 'POST',
        agent: this.agent(hook.caPem),
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(body.length) },
      });
      const timer = setTimeout(() => {
        finish(new WebhookCallError(`failed to call webhook: ${shown}: context deadline exceeded`));
        req.destroy();
      }, hook.timeoutMs);
      const onAbort = (): void => {
        finish(new WebhookCallError(`failed to call webhook: ${shown}: context canceled`));
        req.destroy();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) onAbort();
      req.on('error', (e: NodeJS.ErrnoException) => finish(new WebhookCallError(`failed to call webhook: ${shown}: ${goDialError(e, url)}`)));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > this.maxResponseBytes) {
            finish(new WebhookCallError(`failed to call webhook: ${shown}: the response is larger than ${this.maxResponseBytes} bytes`));
            req.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('error', (e) => finish(new WebhookCallError(`failed to call webhook: ${shown}: ${e.message}`)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code < 200 || code > 299) {
            finish(new WebhookCallError(`failed to call webhook: the server responded with the status code ${code} but did not return more information`));
            return;
          }
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch (e) {
            finish(new WebhookCallError(`failed to call webhook: couldn't get version/kind; json parse error: ${(e as Error).message}`));
            return;
          }
          try {
            finish(undefined, verifyResponse(parsed, uid, hook.mutating));
          } catch (e) {
            finish(new WebhookCallError(`received invalid webhook response: ${(e as Error).message}`));
          }
        });
      });
      req.end(body);
    });
  }

  close(): void {
    for (const a of this.agents.values()) a.destroy();
    this.agents.clear();
  }
}
