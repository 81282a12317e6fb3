// The shell end to end over real TLS on a random port, on both protocols: who may ask (certificates,
// tokens, anonymous only on the public paths, 401 as Kubernetes words it), where a request goes (its
// RequestInfo reaching the handler, 404 and 405 for what nothing serves), and how what a handler
// answers or throws reaches the client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type http2 from 'node:http2';
import { StorageError } from '../../src/apiserver/storage/interface.js';
import { StatusError, statuses } from '../../src/apiserver/status.js';
import { createCa, issueClientCert } from '../../src/apiserver/pki/certificates.js';
import { h1, h2, h2connect, json, type Reply, type RequestSpec } from './helpers/clients.js';
import { handlerOf } from './helpers/fixtures.js';
import { startTestServer, TOKEN, type TestServer } from './helpers/test-server.js';

const UNAUTHORIZED = '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}\n';

interface Echo {
  info: Record<string, unknown>;
  user: { name: string; uid: string; groups: string[] };
  query: Record<string, string>;
  headerNames: string[];
  body?: string;
}

describe('the API server shell', () => {
  let ts: TestServer;
  let session: http2.ClientHttp2Session;
  beforeAll(async () => {
    ts = await startTestServer();
    session = await h2connect(ts.port, ts.ca.certPem, ts.alice);
  });
  afterAll(async () => {
    session?.close();
    await ts?.stop();
  });

  const over = {
    'HTTP/1.1': (spec: RequestSpec): Promise<Reply> => h1(ts.port, ts.ca.certPem, spec),
    'HTTP/2': async (spec: RequestSpec): Promise<Reply> => {
      if (spec.cert === undefined) return h2(session, spec);
      const s = await h2connect(ts.port, ts.ca.certPem, spec.cert);
      try {
        return await h2(s, spec);
      } finally {
        s.close();
      }
    },
  };

  describe.each(['HTTP/1.1', 'HTTP/2'] as const)('over %s', (proto) => {
    const send = (spec: RequestSpec): Promise<Reply> => over[proto](spec);

    it('a client certificate is its CN and O', async () => {
      const r = await send({ path: '/api/v1/namespaces/default/pods/x', cert: ts.alice });
      expect(r.status).toBe(200);
      expect(json<Echo>(r).user).toEqual({ name: 'alice', uid: '', groups: ['dev', 'ops', 'system:authenticated'] });
      expect(json<Echo>(r).info).toMatchObject({ verb: 'get', namespace: 'default', resource: 'pods', name: 'x', apiVersion: 'v1' });
    });

    it('a request reaches the handler parsed, with its query and body', async () => {
      const r = await send({
        method: 'POST',
        path: '/apis/apps/v1/namespaces/prod/deployments?fieldManager=kubectl-create&dryRun=All',
        cert: ts.admin,
        headers: { 'content-type': 'application/json' },
        body: '{"kind":"Deployment"}',
      });
      expect(r.status).toBe(201);
      const e = json<Echo>(r);
      expect(e.info).toMatchObject({ verb: 'create', apiGroup: 'apps', namespace: 'prod', resource: 'deployments', name: '' });
      expect(e.query).toEqual({ fieldManager: 'kubectl-create', dryRun: 'All' });
      expect(e.body).toBe('{"kind":"Deployment"}');
    });

    it('responses carry Kubernetes\' headers', async () => {
      const r = await send({ path: '/api/v1/pods', cert: ts.admin });
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['cache-control']).toBe('no-cache, private');
      expect(String(r.headers['audit-id'])).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('authentication', () => {
    it('a bearer token from the token file', async () => {
      const r = await h1(ts.port, ts.ca.certPem, { path: '/api/v1/pods', token: TOKEN });
      expect(json<Echo>(r).user).toEqual({ name: 'bob', uid: 'uid-bob', groups: ['viewers', 'dev', 'system:authenticated'] });
      // The token stops at authentication, as in Kubernetes.
      expect(json<Echo>(r).headerNames).not.toContain('authorization');
      expect(json<Echo>(r).headerNames).toContain('host');
    });

    it.each([
      ['no credentials', {}],
      ['an unknown token', { token: 'nope' }],
    ])('%s: 401 Unauthorized on resources and discovery', async (_, creds) => {
      for (const path of ['/api/v1/pods', '/api', '/apis', '/metrics', '/openapi/v3', '/', '/no/such/path']) {
        const r = await h1(ts.port, ts.ca.certPem, { path, ...creds });
        expect(r.status, path).toBe(401);
        expect(r.body).toBe(UNAUTHORIZED);
      }
    });

    it('a certificate from another CA is refused, not taken for its CN', async () => {
      const mallory = await issueClientCert(await createCa('mallory-ca'), { user: 'admin', groups: ['system:masters'] });
      const r = await h1(ts.port, ts.ca.certPem, { path: '/api/v1/pods', cert: mallory });
      expect(r.status).toBe(401);
      expect(r.body).toBe(UNAUTHORIZED);
      // Even where anonymous would do: presented credentials that fail are a failure.
      expect((await h1(ts.port, ts.ca.certPem, { path: '/healthz', cert: mallory })).status).toBe(401);
    });

    it('anonymous reads health and version only', async () => {
      for (const path of ['/healthz', '/livez', '/readyz', '/readyz/etcd', '/livez/ping', '/version']) {
        expect((await h1(ts.port, ts.ca.certPem, { path })).status, path).toBe(200);
      }
      expect((await h1(ts.port, ts.ca.certPem, { path: '/healthz', token: 'nope' })).status).toBe(401);
    });
  });

  describe('routing', () => {
    const admin = (spec: Omit<RequestSpec, 'cert'>): Promise<Reply> => h1(ts.port, ts.ca.certPem, { ...spec, cert: ts.admin });

    it.each(['/api/v1/namespaces/default/foos', '/apis/nope/v1/things', '/api/v2/pods', '/api/v1/pods/x', '/nope', '/apis/apps/v1/namespaces/a/deployments/x/nope', '/api/v9', '/apis/nope'])(
      '%s: 404 the server could not find the requested resource',
      async (path) => {
        const r = await admin({ path });
        expect(r.status).toBe(404);
        expect(json(r)).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 });
      },
    );

    it('405 for a verb a resource does not allow, and for a method a path does not take', async () => {
      const r = await admin({ method: 'POST', path: '/api/v1/componentstatuses', body: '{}' });
      expect(r.status).toBe(405);
      expect(json(r)).toMatchObject({ reason: 'MethodNotAllowed', message: 'create is not supported on resources of kind "componentstatuses"' });
      expect((await admin({ method: 'DELETE', path: '/api/v1/namespaces/a/pods/x/status' })).status).toBe(405);
      const d = await admin({ method: 'POST', path: '/apis' });
      expect(d.status).toBe(405);
      expect(json(d)).toMatchObject({ reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource' });
    });

    it('a RequestInfo that cannot be made is a 500 as Kubernetes answers it', async () => {
      const r = await admin({ path: '/api/v1/watch' });
      expect(r.status).toBe(500);
      expect(json(r)).toMatchObject({ reason: 'InternalError', message: 'Internal error occurred: failed to create RequestInfo: unable to determine kind and namespace from url, /api/v1/watch' });
    });

    it('HEAD answers headers only', async () => {
      const r = await admin({ method: 'HEAD', path: '/api/v1/namespaces/a/pods/x' });
      expect(r.status).toBe(200);
      expect(r.body).toBe('');
      expect(Number(r.headers['content-length'])).toBeGreaterThan(0);
    });
  });
});

describe('what handlers answer and throw', () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer({
      handler: handlerOf(async (req, res) => {
        switch (req.info.name) {
          case 'status-error':
            throw new StatusError(statuses.notFound({ group: '', resource: 'pods' }, 'nope'));
          case 'storage-missing':
            throw new StorageError('NotFound', 'key not found', '/registry/deployments/a/storage-missing');
          case 'storage-conflict':
            res.error(new StorageError('Conflict', 'revision mismatch'));
            return;
          case 'storage-down':
            throw new StorageError('Unavailable', 'no leader');
          case 'bug':
            throw new TypeError("Cannot read properties of undefined (reading 'spec')");
          case 'busy':
            res.status(statuses.tooManyRequests('the eviction is blocked by a disruption budget', 10));
            return;
          case 'silent':
            return;
          default:
            res.object(200, { ok: true });
        }
      }),
    });
  });
  afterAll(async () => {
    await ts?.stop();
  });
  const get = (path: string): Promise<Reply> => h1(ts.port, ts.ca.certPem, { path, cert: ts.admin });

  it('a thrown StatusError is its Status', async () => {
    const r = await get('/api/v1/namespaces/a/pods/status-error');
    expect(r.status).toBe(404);
    expect(r.body).toBe('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"nope\\" not found","reason":"NotFound","details":{"name":"nope","kind":"pods"},"code":404}\n');
  });

  it('a StorageError is named after the request\'s resource and object', async () => {
    expect(json(await get('/apis/apps/v1/namespaces/a/deployments/storage-missing'))).toMatchObject({ code: 404, message: 'deployments.apps "storage-missing" not found', details: { name: 'storage-missing', group: 'apps', kind: 'deployments' } });
    expect(json(await get('/apis/apps/v1/namespaces/a/deployments/storage-conflict'))).toMatchObject({ code: 409, reason: 'Conflict', message: expect.stringMatching(/^Operation cannot be fulfilled on deployments.apps "storage-conflict": the object has been modified/) });
    const down = await get('/apis/apps/v1/namespaces/a/deployments/storage-down');
    expect(json(down)).toMatchObject({ code: 500, reason: 'ServerTimeout', message: 'The get operation against deployments.apps could not be completed at this time, please try again.' });
    expect(down.headers['retry-after']).toBe('2');
  });

  it('anything else is a 500 InternalError', async () => {
    const r = await get('/api/v1/namespaces/a/pods/bug');
    expect(r.status).toBe(500);
    expect(json(r)).toMatchObject({ reason: 'InternalError', message: "Internal error occurred: Cannot read properties of undefined (reading 'spec')" });
  });

  it('Retry-After comes from the Status', async () => {
    const r = await get('/api/v1/namespaces/a/pods/busy');
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('10');
  });

  it('a handler that answers nothing gets a 500, not a hung client', async () => {
    const r = await get('/api/v1/namespaces/a/pods/silent');
    expect(r.status).toBe(500);
    expect(json(r)).toMatchObject({ message: 'Internal error occurred: the handler sent no response' });
  });
});
