// The webhook client's bounds and checks on a real HTTPS webhook: a response over the size cap is a call
// failure, and VerifyAdmissionResponse's rules (kind, uid, patches only from mutating webhooks) with
// Kubernetes' words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labelSelectorAsSelector } from '../../../src/api/label-selector.js';
import { verifyResponse, WebhookCallError, WebhookClient } from '../../../src/apiserver/admission/webhook-client.js';
import type { Webhook } from '../../../src/apiserver/admission/webhook-config.js';
import { startWebhookServer, type WebhookServer } from '../../../src/harness/webhook-server.js';

describe('webhook client', () => {
  let hooks: WebhookServer;
  beforeAll(async () => {
    hooks = await startWebhookServer();
  });
  afterAll(async () => {
    await hooks?.stop();
  });

  const hook = (path: string): Webhook => ({
    name: 'h.example.com',
    configuration: 'c',
    mutating: true,
    rules: [],
    failurePolicy: 'Fail',
    timeoutMs: 5000,
    sideEffects: 'None',
    reinvoke: false,
    namespaceSelector: labelSelectorAsSelector({}),
    objectSelector: labelSelectorAsSelector({}),
    url: hooks.url(path),
    caPem: Buffer.from(hooks.caBundle, 'base64').toString('utf8'),
  });

  it('answers a verified response, and refuses one over its size cap', async () => {
    const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u1' } };
    const ok = new WebhookClient();
    const small = new WebhookClient(50);
    try {
      await expect(ok.call(hook('/allow'), review, 'u1', new AbortController().signal)).resolves.toMatchObject({ allowed: true, warnings: [] });
      const err = await small.call(hook('/allow'), review, 'u1', new AbortController().signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WebhookCallError);
      expect((err as Error).message).toBe(`failed to call webhook: Post "${hooks.url('/allow')}?timeout=5s": the response is larger than 50 bytes`);
    } finally {
      ok.close();
      small.close();
    }
  });

  it('checks the answer as Kubernetes does', () => {
    const resp = (r: Record<string, unknown>, kind = 'AdmissionReview'): unknown => ({ apiVersion: 'admission.k8s.io/v1', kind, response: { uid: 'u', allowed: true, ...r } });
    const words = (body: unknown, mutating: boolean): string => {
      try {
        verifyResponse(body, 'u', mutating);
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(words({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, true)).toBe('webhook response was absent');
    expect(words(resp({ uid: 'x' }), true)).toBe('expected response.uid="u", got "x"');
    expect(words(resp({}, 'Other'), true)).toBe('expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1, Kind=Other');
    expect(words(resp({ patch: 'W10=' }), true)).toBe('webhook returned response.patch but not response.patchType');
    expect(words(resp({ patchType: 'JSONPatch' }), true)).toBe('webhook returned response.patchType but not response.patch');
    expect(words(resp({ patch: 'W10=', patchType: 'JSONPatch' }), false)).toBe('validating webhook may not return response.patch');
    expect(words(resp({ patch: 'W10=', patchType: 'JSONPatch' }), true)).toBe('');
  });
});
