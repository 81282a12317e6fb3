// The REST client against a real API server shell on a random port, over HTTP/2 and HTTP/1.1: the
// built-in endpoints, Status errors parsed, a watch split across frames, and the fencing headers that
// only writes carry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceHandler } from '../../src/apiserver/handler.js';
import { StatusError, statuses } from '../../src/apiserver/status.js';
import { ApiStatusError } from '../../src/client/api-status-error.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { PODS } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import { startTestServer, type TestServer } from '../apiserver/helpers/test-server.js';

const handler: ResourceHandler = {
  async serve(req, res) {
    const { verb, name } = req.info;
    if (verb === 'get' && name === 'missing') throw new StatusError(statuses.notFound({ group: '', resource: 'pods' }, 'missing'));
    if (verb === 'watch') {
      const w = res.watch();
      await w.send({ type: 'ADDED', object: { kind: 'Pod', metadata: { name: 'a', resourceVersion: '5' } } });
      await w.send({ type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '6' } } });
      w.end();
      return;
    }
    const body = (await req.body()).toString();
    res.object(verb === 'create' ? 201 : 200, { verb, name, body: body === '' ? undefined : JSON.parse(body), fencing: req.headers['setpoint-fencing-token'] });
  },
};

describe.each(['h2', 'http/1.1'] as const)('RestClient over %s', (protocol) => {
  let ts: TestServer;
  let rest: RestClient;
  beforeAll(async () => {
    ts = await startTestServer({ handler });
    rest = new RestClient({ server: ts.url, protocol, tls: { ca: ts.ca.certPem, cert: ts.admin.certPem, key: ts.admin.keyPem } });
  });
  afterAll(async () => {
    rest?.close();
    await ts?.stop();
  });

  it('reads /version and /healthz', async () => {
    expect(await rest.request<{ major: string; minor: string }>({ path: '/version' })).toMatchObject({ major: '1', minor: '32' });
    const h = await rest.raw({ path: '/healthz' });
    expect([h.status, h.body.toString()]).toEqual([200, 'ok']);
  });

  it('parses a Status into an ApiStatusError', async () => {
    const pods = new ResourceClient(rest, PODS);
    const e = await pods.get('default', 'missing').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiStatusError);
    expect((e as ApiStatusError).status).toMatchObject({ code: 404, reason: 'NotFound', message: 'pods "missing" not found' });
  });

  it('fills kind and apiVersion on create; fencing headers go on writes only', async () => {
    const fenced = new ResourceClient(
      rest.withWriteHeaders(() => ({ 'setpoint-fencing-token': 'kube-system/l/me/3' })),
      PODS,
    );
    const created = (await fenced.create({ metadata: { name: 'p', namespace: 'default' } })) as Record<string, unknown>;
    expect(created).toMatchObject({ verb: 'create', body: { apiVersion: 'v1', kind: 'Pod' }, fencing: 'kube-system/l/me/3' });
    const got = (await fenced.get('default', 'p')) as Record<string, unknown>;
    expect(got.fencing).toBeUndefined();
  });

  it('streams a watch', async () => {
    const pods = new ResourceClient(rest, PODS);
    const ac = new AbortController();
    const seen: string[] = [];
    for await (const ev of pods.watch('default', { signal: ac.signal, allowWatchBookmarks: true })) seen.push(`${ev.type}:${ev.object.metadata?.resourceVersion}`);
    expect(seen).toEqual(['ADDED:5', 'BOOKMARK:6']);
  });
});
