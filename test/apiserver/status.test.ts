// Every Status the API server answers with, byte for byte against the bodies kube-apiserver sends
// (apimachinery's api/errors builders: code, reason, message, details in Go's key order), and the
// mapping of each StorageError code onto them.
import { describe, expect, it } from 'vitest';
import { StorageError, type StorageErrorCode } from '../../src/apiserver/storage/interface.js';
import { statusFromStorageError } from '../../src/apiserver/storage-status.js';
import { OPTIMISTIC_LOCK_MESSAGE, StatusError, statusOf, statuses } from '../../src/apiserver/status.js';

const pods = { group: '', resource: 'pods' };
const deployments = { group: 'apps', resource: 'deployments' };
const body = (s: unknown): string => JSON.stringify(s);

describe('Status builders', () => {
  it('NotFound: core and grouped resources', () => {
    expect(body(statuses.notFound(pods, 'x'))).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"x\\" not found","reason":"NotFound","details":{"name":"x","kind":"pods"},"code":404}',
    );
    expect(body(statuses.notFound(deployments, 'web'))).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \\"web\\" not found","reason":"NotFound","details":{"name":"web","group":"apps","kind":"deployments"},"code":404}',
    );
  });

  it('the not-found handler for paths nothing serves', () => {
    expect(body(statuses.pathNotFound())).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}',
    );
  });

  it('AlreadyExists and the generateName conflict', () => {
    expect(statuses.alreadyExists(pods, 'x')).toMatchObject({ code: 409, reason: 'AlreadyExists', message: 'pods "x" already exists', details: { name: 'x', kind: 'pods' } });
    expect(statuses.generateNameConflict(pods, 'x-abcde', 1)).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'pods "x-abcde" already exists, the server was not able to generate a unique name for the object',
      details: { name: 'x-abcde', kind: 'pods', retryAfterSeconds: 1 },
    });
  });

  it('Conflict with the optimistic-lock sentence kubectl users know', () => {
    expect(statuses.conflict(pods, 'x')).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on pods "x": the object has been modified; please apply your changes to the latest version and try again',
    });
    expect(statuses.conflict(deployments, 'web').details).toEqual({ name: 'web', group: 'apps', kind: 'deployments' });
  });

  it('apply conflicts carry causes and nothing else in details', () => {
    const s = statuses.applyConflict('Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas', [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.replicas' }]);
    expect(body(s.details)).toBe('{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \\"kubectl\\"","field":".spec.replicas"}]}');
    expect(s.code).toBe(409);
  });

  it('Invalid: one cause, several, duplicates dropped from the message but kept as causes', () => {
    const one = statuses.invalid({ group: '', kind: 'Pod' }, 'invalid', [{ type: 'FieldValueRequired', field: 'spec.containers[0].image', message: 'Required value' }]);
    expect(body(one)).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Pod \\"invalid\\" is invalid: spec.containers[0].image: Required value","reason":"Invalid","details":{"name":"invalid","kind":"Pod","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers[0].image"}]},"code":422}',
    );
    const two = statuses.invalid({ group: 'apps', kind: 'Deployment' }, 'web', [
      { type: 'FieldValueRequired', field: 'spec.selector', message: 'Required value' },
      { type: 'FieldValueInvalid', field: 'spec.replicas', message: 'Invalid value: -1: must be greater than or equal to 0' },
      { type: 'FieldValueRequired', field: 'spec.selector', message: 'Required value' },
    ]);
    expect(two.message).toBe('Deployment.apps "web" is invalid: [spec.selector: Required value, spec.replicas: Invalid value: -1: must be greater than or equal to 0]');
    expect(two.details?.group).toBe('apps');
    expect(two.details?.causes).toHaveLength(3);
    expect(statuses.invalid({ group: '', kind: 'Pod' }, 'p', []).message).toBe('Pod "p" is invalid');
  });

  it('BadRequest, Unauthorized, Forbidden', () => {
    expect(body(statuses.badRequest('the body is bad'))).toBe('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body is bad","reason":"BadRequest","code":400}');
    expect(body(statuses.unauthorized())).toBe('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}');
    expect(statuses.forbidden(pods, 'x', 'User "u" cannot get resource "pods"')).toMatchObject({ code: 403, reason: 'Forbidden', message: 'pods "x" is forbidden: User "u" cannot get resource "pods"' });
    expect(statuses.forbidden(pods, '', 'no').message).toBe('pods is forbidden: no');
    expect(statuses.forbidden(undefined, '', 'User "system:anonymous" cannot get path "/"').message).toBe('forbidden: User "system:anonymous" cannot get path "/"');
  });

  it('MethodNotAllowed, for a resource and for a bare path', () => {
    expect(statuses.methodNotSupported(pods, 'create')).toMatchObject({ code: 405, reason: 'MethodNotAllowed', message: 'create is not supported on resources of kind "pods"', details: { kind: 'pods' } });
    expect(statuses.methodNotAllowed()).toMatchObject({ code: 405, reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource' });
  });

  it('Gone and Expired', () => {
    expect(statuses.gone('gone away')).toMatchObject({ code: 410, reason: 'Gone', message: 'gone away' });
    expect(body(statuses.expired('too old resource version: 5 (10)'))).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (10)","reason":"Expired","code":410}',
    );
  });

  it('TooManyRequests, RequestEntityTooLarge, UnsupportedMediaType, NotAcceptable', () => {
    expect(statuses.tooManyRequests('slow down', 3)).toMatchObject({ code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 3 } });
    expect(statuses.requestEntityTooLarge('limit is 3145728')).toMatchObject({ code: 413, reason: 'RequestEntityTooLarge', message: 'Request entity too large: limit is 3145728' });
    expect(statuses.unsupportedMediaType(['application/json', 'application/merge-patch+json']).message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json, application/merge-patch+json',
    );
    expect(statuses.unsupportedMediaType(['application/json']).code).toBe(415);
    expect(statuses.notAcceptable(['application/json'])).toMatchObject({ code: 406, reason: 'NotAcceptable', message: 'only the following media types are accepted: application/json' });
  });

  it('Timeout, the too-large resourceVersion and ServerTimeout', () => {
    expect(body(statuses.timeout('request did not complete within requested timeout - context deadline exceeded'))).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within requested timeout - context deadline exceeded","reason":"Timeout","details":{},"code":504}',
    );
    expect(statuses.tooLargeResourceVersion('Too large resource version: 20, current: 10')).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Timeout: Too large resource version: 20, current: 10',
      reason: 'Timeout',
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
      code: 504,
    });
    expect(statuses.serverTimeout(pods, 'list', 2)).toMatchObject({
      code: 500,
      reason: 'ServerTimeout',
      message: 'The list operation against pods could not be completed at this time, please try again.',
      details: { name: 'list', kind: 'pods', retryAfterSeconds: 2 },
    });
  });

  it('InternalError, the reasonless 500 and ServiceUnavailable', () => {
    expect(body(statuses.internalError('boom'))).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: boom","reason":"InternalError","details":{"causes":[{"message":"boom"}]},"code":500}',
    );
    expect(body(statuses.unknown('etcdserver: request is too large'))).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request is too large","code":500}',
    );
    expect(statuses.serviceUnavailable('not yet')).toMatchObject({ code: 503, reason: 'ServiceUnavailable', message: 'not yet' });
  });

  it('statusOf: a StatusError as it is, a Status-shaped value as it is, anything else a 500', () => {
    const nf = statuses.notFound(pods, 'x');
    expect(statusOf(new StatusError(nf))).toBe(nf);
    expect(new StatusError(nf).code).toBe('NotFound');
    expect(statusOf(nf)).toBe(nf);
    expect(statusOf(new TypeError('x is undefined'))).toMatchObject({ code: 500, reason: 'InternalError', message: 'Internal error occurred: x is undefined' });
  });
});

describe('StorageError codes as Statuses', () => {
  const ctx = { resource: deployments, name: 'web', operation: 'update' as const };
  const cases: [StorageErrorCode, string, unknown][] = [
    ['NotFound', 'key not found', { code: 404, reason: 'NotFound', message: 'deployments.apps "web" not found' }],
    ['AlreadyExists', 'key exists', { code: 409, reason: 'AlreadyExists', message: 'deployments.apps "web" already exists' }],
    ['Conflict', 'mod revision mismatch', { code: 409, reason: 'Conflict', message: `Operation cannot be fulfilled on deployments.apps "web": ${OPTIMISTIC_LOCK_MESSAGE}` }],
    [
      'Conflict',
      'Precondition failed: UID in precondition: a, UID in object meta: b',
      { code: 409, reason: 'Conflict', message: 'Operation cannot be fulfilled on deployments.apps "web": Precondition failed: UID in precondition: a, UID in object meta: b' },
    ],
    ['GuardFailed', 'the lease kube-system/ctl changed', { code: 409, reason: 'Conflict', message: 'Operation cannot be fulfilled on deployments.apps "web": the lease kube-system/ctl changed' }],
    ['Expired', 'too old resource version: 5 (10)', { code: 410, reason: 'Expired', message: 'too old resource version: 5 (10)' }],
    ['TooLargeResourceVersion', 'Too large resource version: 20, current: 10', { code: 504, reason: 'Timeout', message: 'Timeout: Too large resource version: 20, current: 10' }],
    ['InvalidContinue', 'invalid continue token: bad', { code: 400, reason: 'BadRequest', message: 'invalid continue token: bad' }],
    ['Unavailable', 'etcd down', { code: 500, reason: 'ServerTimeout', message: 'The update operation against deployments.apps could not be completed at this time, please try again.' }],
    ['RequestTooLarge', 'etcdserver: request is too large', { code: 500, message: 'etcdserver: request is too large' }],
  ];
  it.each(cases)('%s (%s)', (code, message, want) => {
    const s = statusFromStorageError(new StorageError(code, message), ctx);
    expect(s).toMatchObject(want as object);
    if (code === 'RequestTooLarge') expect(s.reason).toBeUndefined();
  });
});
