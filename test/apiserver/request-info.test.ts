// RequestInfo as Kubernetes' RequestInfoFactory parses it, case by case (its own test table's shapes),
// and the resource routes' 404s and 405s for what parses but names nothing served.
import { describe, expect, it } from 'vitest';
import { RequestInfoError, isLongRunning, isMutating, parseRequestInfo } from '../../src/apiserver/request-info.js';
import { ResourceRegistry } from '../../src/apiserver/resource-registry.js';
import { routeResource } from '../../src/apiserver/resource-route.js';
import { ALL_DESCRIPTORS, echoHandler } from './helpers/fixtures.js';

function parse(method: string, url: string) {
  const u = new URL(url, 'https://x');
  return parseRequestInfo(method, u.pathname, u.searchParams);
}

describe('parseRequestInfo', () => {
  it.each([
    ['GET', '/api/v1/namespaces', 'list', '', '', 'namespaces', '', ''],
    ['GET', '/api/v1/namespaces/other', 'get', '', 'other', 'namespaces', '', 'other'],
    ['GET', '/api/v1/namespaces/other/pods/foo', 'get', '', 'other', 'pods', '', 'foo'],
    ['GET', '/api/v1/namespaces/other/pods', 'list', '', 'other', 'pods', '', ''],
    ['GET', '/api/v1/pods', 'list', '', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=true', 'watch', '', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=1', 'watch', '', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=false', 'list', '', '', 'pods', '', ''],
    ['GET', '/api/v1/pods?watch=0', 'list', '', '', 'pods', '', ''],
    ['GET', '/api/v1/namespaces/other/pods/foo?watch=true', 'get', '', 'other', 'pods', '', 'foo'],
    ['HEAD', '/api/v1/namespaces/other/pods/foo', 'get', '', 'other', 'pods', '', 'foo'],
    ['GET', '/api/v1/watch/pods', 'watch', '', '', 'pods', '', ''],
    ['GET', '/api/v1/watch/namespaces/other/pods/foo', 'watch', '', 'other', 'pods', '', 'foo'],
    ['POST', '/api/v1/namespaces/other/pods', 'create', '', 'other', 'pods', '', ''],
    ['PUT', '/api/v1/namespaces/other/pods/foo', 'update', '', 'other', 'pods', '', 'foo'],
    ['PATCH', '/api/v1/namespaces/other/pods/foo', 'patch', '', 'other', 'pods', '', 'foo'],
    ['DELETE', '/api/v1/namespaces/other/pods/foo', 'delete', '', 'other', 'pods', '', 'foo'],
    ['DELETE', '/api/v1/namespaces/other/pods', 'deletecollection', '', 'other', 'pods', '', ''],
    ['GET', '/api/v1/namespaces/other/pods/foo/log', 'get', '', 'other', 'pods', 'log', 'foo'],
    ['PUT', '/api/v1/namespaces/other/finalize', 'update', '', 'other', 'namespaces', 'finalize', 'other'],
    ['GET', '/api/v1/namespaces/other/status', 'get', '', 'other', 'namespaces', 'status', 'other'],
    // Setpoint's own history subresource: a namespace's, and any object's.
    ['GET', '/api/v1/namespaces/other/history', 'get', '', 'other', 'namespaces', 'history', 'other'],
    ['GET', '/api/v1/namespaces/other/pods/foo/history', 'get', '', 'other', 'pods', 'history', 'foo'],
    ['GET', '/apis/apps/v1/namespaces/other/deployments/web/scale', 'get', 'apps', 'other', 'deployments', 'scale', 'web'],
    ['GET', '/apis/apps/v1/deployments', 'list', 'apps', '', 'deployments', '', ''],
    ['GET', '/api/v1/proxy/namespaces/other/pods/foo/extra', 'proxy', '', 'other', 'pods', '', 'foo'],
    ['OPTIONS', '/api/v1/namespaces/other/pods/foo', '', '', 'other', 'pods', '', 'foo'],
  ])('%s %s', (method, url, verb, group, namespace, resource, subresource, name) => {
    const info = parse(method, url);
    expect(info.isResourceRequest).toBe(true);
    expect({ verb: info.verb, group: info.apiGroup, namespace: info.namespace, resource: info.resource, subresource: info.subresource, name: info.name }).toEqual({
      verb,
      group,
      namespace,
      resource,
      subresource,
      name,
    });
  });

  it.each(['/', '/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/healthz', '/version', '/openapi/v3/api/v1', '/foo/bar/baz'])(
    '%s is not a resource request; its verb is the method',
    (path) => {
      const info = parse('GET', path);
      expect(info.isResourceRequest).toBe(false);
      expect(info.verb).toBe('get');
      expect(parse('POST', path).verb).toBe('post');
    },
  );

  it('a special verb without a resource does not parse', () => {
    expect(() => parse('GET', '/api/v1/watch')).toThrow(RequestInfoError);
    expect(() => parse('GET', '/api/v1/watch')).toThrow('unable to determine kind and namespace from url, /api/v1/watch');
  });

  it('long-running and mutating requests, as the in-flight filter splits them', () => {
    expect(isLongRunning(parse('GET', '/api/v1/pods?watch=true'))).toBe(true);
    expect(isLongRunning(parse('GET', '/api/v1/namespaces/a/pods/x/log'))).toBe(true);
    expect(isLongRunning(parse('GET', '/api/v1/namespaces/a/pods/x'))).toBe(false);
    expect(isMutating(parse('GET', '/api/v1/pods'))).toBe(false);
    expect(isMutating(parse('GET', '/api/v1/pods?watch=1'))).toBe(false);
    expect(isMutating(parse('PATCH', '/api/v1/namespaces/a/pods/x'))).toBe(true);
    expect(isMutating(parse('DELETE', '/api/v1/namespaces/a/pods'))).toBe(true);
  });
});

describe('routeResource', () => {
  const registry = new ResourceRegistry();
  for (const d of ALL_DESCRIPTORS) registry.register(d, echoHandler);
  const route = (method: string, url: string) => routeResource(registry, parse(method, url));

  it.each([
    ['GET', '/api/v1/namespaces/a/pods/x'],
    ['GET', '/api/v1/pods'],
    ['GET', '/api/v1/pods?watch=true'],
    ['GET', '/api/v1/watch/namespaces/a/pods/x'],
    ['PUT', '/api/v1/namespaces/a/pods/x/status'],
    ['GET', '/api/v1/namespaces/a'],
    ['PUT', '/api/v1/namespaces/a/finalize'],
    ['GET', '/api/v1/namespaces'],
    ['PATCH', '/apis/apps/v1/namespaces/a/deployments/web/scale'],
    ['POST', '/api/v1/namespaces/a/pods/x/binding'],
  ])('%s %s is served', (method, url) => {
    expect(route(method, url).kind).toBe('resource');
  });

  it.each([
    ['GET', '/api/v1/namespaces/a/foos'],
    ['GET', '/api/v2/pods'],
    ['GET', '/apis/nope/v1/things'],
    ['GET', '/apis/apps/v2/deployments'],
    ['GET', '/api/v1/pods/x'],
    ['GET', '/api/v1/namespaces/a/componentstatuses/x'],
    ['GET', '/api/v1/namespaces/a/pods/x/nope'],
    ['GET', '/api/v1/namespaces/a/pods/x/status/more'],
  ])('%s %s is 404 the server could not find the requested resource', (method, url) => {
    const r = route(method, url);
    expect(r.kind).toBe('error');
    if (r.kind === 'error') expect(r.status).toMatchObject({ code: 404, reason: 'NotFound', message: 'the server could not find the requested resource' });
  });

  it.each([
    ['POST', '/api/v1/componentstatuses', 'create is not supported on resources of kind "componentstatuses"'],
    ['DELETE', '/api/v1/namespaces', 'deletecollection is not supported on resources of kind "namespaces"'],
    ['POST', '/api/v1/pods', 'create is not supported on resources of kind "pods"'],
    ['DELETE', '/api/v1/pods', 'deletecollection is not supported on resources of kind "pods"'],
    ['DELETE', '/api/v1/namespaces/a/pods/x/status', 'delete is not supported on resources of kind "pods/status"'],
    ['OPTIONS', '/api/v1/namespaces/a/pods/x', 'this method is not supported on resources of kind "pods"'],
  ])('%s %s is 405', (method, url, message) => {
    const r = route(method, url);
    expect(r.kind).toBe('error');
    if (r.kind === 'error') expect(r.status).toMatchObject({ code: 405, reason: 'MethodNotAllowed', message });
  });

  it('refuses to register a resource twice', () => {
    expect(() => registry.register(ALL_DESCRIPTORS[0]!, echoHandler)).toThrow('registered twice');
  });
});
