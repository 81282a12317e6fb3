// A real HTTPS admission webhook in the test process (node:https, a certificate from the cluster CA helpers),
// answering by path: allow, deny (a Forbidden Status), deny-bare (no Status), patch (a JSON patch adding a
// label), sidecar (one adding a container), warn (allowed with warnings), slow (never answers), garbage (not JSON), wrong-uid. It records every
// AdmissionReview it gets. stop() ends it and every connection it holds.
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { createCa, issueServingCert } from '../apiserver/pki/certificates.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface WebhookServer {
  /** `https://127.0.0.1:<port>/<path>`. */
  url(path: string): string;
  /** The CA bundle that trusts it, base64 as clientConfig.caBundle takes it. */
  readonly caBundle: string;
  /** Every review received, with the path it came to. */
  readonly reviews: { path: string; review: Obj }[];
  stop(): Promise<void>;
}

function answer(path: string, review: Obj): unknown {
  const uid = review['request']?.uid as string;
  const response = (extra: Obj): Obj => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, ...extra } });
  switch (path) {
    case '/allow':
      return response({ allowed: true });
    case '/deny':
      return response({ allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no pods here' } });
    case '/deny-bare':
      return response({ allowed: false });
    case '/patch': {
      const ops = [{ op: 'add', path: '/metadata/labels/patched', value: 'yes' }];
      return response({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });
    }
    case '/sidecar': {
      const ops = [{ op: 'add', path: '/spec/containers/-', value: { name: 'sidecar', image: 'busybox:1.36' } }];
      return response({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });
    }
    case '/warn':
      return response({ allowed: true, warnings: ['careful: this is a test'] });
    case '/wrong-uid':
      return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'nope', allowed: true } };
    default:
      return undefined;
  }
}

export async function startWebhookServer(): Promise<WebhookServer> {
  const ca = await createCa('webhook-test-ca');
  const serving = await issueServingCert(ca, ['127.0.0.1']);
  const reviews: { path: string; review: Obj }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      let review: Obj = {};
      try {
        review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj;
      } catch {
        // recorded as empty
      }
      reviews.push({ path, review });
      if (path === '/slow') return; // never answers: the API server's timeout must end it
      if (path === '/garbage') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('this is not json{');
        return;
      }
      const body = answer(path, review);
      if (body === undefined) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  return {
    url: (path) => `https://127.0.0.1:${port}${path.startsWith('/') ? path : `/${path}`}`,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    reviews,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
