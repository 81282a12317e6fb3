// The bad inputs of docs/apiserver-errors.md, each answered with its Status and nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/clients.js';
import { startRegistryServer, type RegistryServer } from './registry-server.js';

describe('bad input', () => {
  let s: RegistryServer;
  beforeAll(async () => {
    s = await startRegistryServer('etcd');
  });
  afterAll(async () => {
    await s?.stop();
  });

  const cases: [string, string, string, string | undefined, Record<string, string>, number, string, string][] = [
    ['malformed JSON', 'POST', '/api/v1/namespaces/default/configmaps', '{"metadata": {', {}, 400, 'BadRequest', "couldn't get version/kind; json parse error: unexpected end of JSON input"],
    ['malformed YAML', 'POST', '/api/v1/namespaces/default/configmaps', 'metadata: [a\n', { 'content-type': 'application/yaml' }, 400, 'BadRequest', 'error converting YAML to JSON: '],
    ['apiVersion not the URL\'s', 'POST', '/api/v1/namespaces/default/configmaps', '{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}}', {}, 400, 'BadRequest', 'the API version in the data (apps/v1) does not match the expected API version (v1)'],
    ['kind not the URL\'s', 'POST', '/api/v1/namespaces/default/configmaps', '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}', {}, 400, 'BadRequest', 'the kind in the data (Secret) does not match the expected kind (ConfigMap)'],
    ['a body that is not an object', 'POST', '/api/v1/namespaces/default/configmaps', '[1]', {}, 400, 'BadRequest', 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go value of type struct'],
    ['invalid label selector', 'GET', '/api/v1/pods?labelSelector=a%20in%20(', undefined, {}, 400, 'BadRequest', 'unable to parse requirement: '],
    ['unsupported field selector', 'GET', '/api/v1/pods?fieldSelector=spec.image%3Dx', undefined, {}, 400, 'BadRequest', 'field label not supported: spec.image'],
    ['unknown resource', 'GET', '/api/v1/widgets', undefined, {}, 404, 'NotFound', 'the server could not find the requested resource'],
    ['protobuf body of a kind not decoded from protobuf', 'POST', '/api/v1/namespaces/default/pods', 'k8s\u0000', { 'content-type': 'application/vnd.kubernetes.protobuf' }, 415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml'],
    ['wrong patch type', 'PATCH', '/api/v1/namespaces/default/configmaps/x', '{}', { 'content-type': 'text/plain' }, 415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml'],
    ['bad dryRun', 'POST', '/api/v1/namespaces/default/configmaps?dryRun=Some', '{"metadata":{"name":"x"}}', {}, 400, 'BadRequest', 'Invalid dry run value: "Some", only "All" is supported'],
    ['bad fieldValidation', 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Loose', '{"metadata":{"name":"x"}}', {}, 400, 'BadRequest', 'fieldValidation parameter unsupported: Loose'],
  ];

  it.each(cases)('%s', async (_what, method, path, body, headers, code, reason, message) => {
    const r = await s.call(method, path, body, headers);
    expect(r.status, r.body).toBe(code);
    const st = json<{ reason: string; message: string; code: number }>(r);
    expect(st.reason).toBe(reason);
    expect(st.message.startsWith(message), st.message).toBe(true);
    expect((await s.call('GET', '/api/v1/namespaces/default/configmaps/x')).status).toBe(404);
  });

  it('refuses a body over the limit with 413', async () => {
    const big = JSON.stringify({ metadata: { name: 'x' }, data: { a: 'x'.repeat(3 * 1024 * 1024 + 1) } });
    const r = await s.call('POST', '/api/v1/namespaces/default/configmaps', big);
    expect(r.status).toBe(413);
    expect(json(r)).toMatchObject({ reason: 'RequestEntityTooLarge', message: 'Request entity too large: limit is 3145728' });
  });
});
