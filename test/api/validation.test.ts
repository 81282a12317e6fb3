// Validation helpers against apimachinery's cases (util/validation/validation_test.go, api/validation,
// util/intstr) and messages: names, qualified names, label values, ObjectMeta on create and update,
// field.Error printing, the Invalid Status kubectl reads, and IntOrString percentages.
import { describe, expect, it } from 'vitest';
import { aggregateMessage, errorBody, errorString, fieldError, goQuote } from '../../src/api/field-errors.js';
import { FieldPath } from '../../src/api/field-path.js';
import { isNotMoreThan100Percent, parseIntOrString, scaledValueFromIntOrPercent, validatePositiveIntOrPercent } from '../../src/api/int-or-string.js';
import {
  isConfigMapKey, isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isEnvVarName, isQualifiedName, isValidLabelValue,
  isValidPortName, nameIsDNSLabel, nameIsDNSSubdomain,
} from '../../src/api/name-validation.js';
import { generateName, validateObjectMeta, validateObjectMetaUpdate } from '../../src/api/object-meta-validation.js';
import { invalidStatus } from '../../src/api/status.js';

const repeat = (s: string, n: number): string => s.repeat(n);

describe('names', () => {
  it('checks DNS-1123 labels', () => {
    for (const v of ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', '0', '01', '012', '1a', '1-a', '1--a--b--2', repeat('a', 63)]) {
      expect(isDNS1123Label(v), v).toEqual([]);
    }
    for (const v of ['', 'A', 'ABC', 'aBc', 'A1', 'A-1', '1-A', '-', 'a-', '-a', '1-', '-1', '_', 'a_', '_a', 'a_b', '1_', '_1', '1_2', '.', 'a.', '.a', 'a.b', '1.', '.1', '1.2', ' ', 'a ', ' a', 'a b', '1 ', ' 1', '1 2', repeat('a', 64)]) {
      expect(isDNS1123Label(v).length, JSON.stringify(v)).toBeGreaterThan(0);
    }
    expect(isDNS1123Label('a.b')).toEqual(['must not contain dots']);
    expect(isDNS1123Label('A')).toEqual([
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
    expect(isDNS1123Label(repeat('a', 64))).toEqual(['must be no more than 63 characters']);
  });

  it('checks DNS-1123 subdomains', () => {
    for (const v of ['a', 'a.a', 'a--1--2--b.1', '0.1', 'a.b.c.d.e', '1.2.3.4.5', repeat('a', 253)]) expect(isDNS1123Subdomain(v), v).toEqual([]);
    for (const v of ['', 'A', 'a..b', '.a', 'a.', '1..2', 'a b', repeat('a', 254)]) expect(isDNS1123Subdomain(v).length, v).toBeGreaterThan(0);
    expect(isDNS1123Subdomain('Web_1')).toEqual([
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
  });

  it('checks DNS-1035 labels', () => {
    for (const v of ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', repeat('a', 63)]) expect(isDNS1035Label(v), v).toEqual([]);
    for (const v of ['0', '01', '012', '1a', '1-a', '1--a--b--2', '', 'A', 'a-', '-a', 'a_b', 'a.b', repeat('a', 64)]) {
      expect(isDNS1035Label(v).length, v).toBeGreaterThan(0);
    }
  });

  it('checks qualified names and label values', () => {
    for (const v of ['simple', 'now-with-dashes', '1-starts-with-num', '1234', 'simple/simple', 'now-with-dashes/simple', 'now-with-dashes/now-with-dashes', 'now.with.dots/simple', 'now-with.dashes-and.dots/simple', '1-num.2-num/3-num', '1234/5678', '1.2.3.4/5678', 'Uppercase_Is_OK_123', 'example.com/Uppercase_Is_OK_123', 'requests.storage-foo', repeat('a', 63), repeat('a', 253) + '/' + repeat('b', 63)]) {
      expect(isQualifiedName(v), v).toEqual([]);
    }
    for (const v of ['nospecialchars%^=@', 'cantendwithadash-', '-cantstartwithadash-', 'only/one/slash', 'Example.com/abc', 'example_com/abc', 'example.com/', '/simple', repeat('a', 64), repeat('a', 254) + '/abc']) {
      expect(isQualifiedName(v).length, v).toBeGreaterThan(0);
    }
    expect(isQualifiedName('example.com/')).toEqual([
      'name part must be non-empty',
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
    expect(isQualifiedName('/simple')).toEqual(['prefix part must be non-empty']);
    expect(isQualifiedName('a/b/c')[0]).toMatch(/^a qualified name must consist of .* with an optional DNS subdomain prefix and '\/' \(e\.g\. 'example\.com\/MyName'\)$/);
    for (const v of ['simple', 'now-with-dashes', '1-starts-with-num', 'end-with-num-1', '1234', repeat('a', 63), '']) expect(isValidLabelValue(v), v).toEqual([]);
    for (const v of ['nospecialchars%^=@', 'Tama-nui-te-rā.is.Māori.sun', '\\backslashes\\are\\bad', '-starts-with-dash', 'ends-with-dash-', '.starts.with.dot', 'ends.with.dot.', repeat('a', 64)]) {
      expect(isValidLabelValue(v).length, v).toBeGreaterThan(0);
    }
  });

  it('checks config keys, env var names and port names', () => {
    for (const v of ['a', 'A', 'a.b', '.a', 'a-b', 'A_B', '_', '-']) expect(isConfigMapKey(v), v).toEqual([]);
    expect(isConfigMapKey('..')).toEqual(["must not be '..'"]);
    expect(isConfigMapKey('a/b')[0]).toMatch(/^a valid config key must consist of alphanumeric characters/);
    expect(isEnvVarName('MY_VAR')).toEqual([]);
    expect(isEnvVarName('1A')[0]).toMatch(/^a valid environment variable name must consist of/);
    expect(isValidPortName('http')).toEqual([]);
    expect(isValidPortName('a--b')).toEqual(['must not contain consecutive hyphens']);
    expect(isValidPortName('123')).toEqual(['must contain at least one letter (a-z)']);
  });

  it('lets generateName end in a dash, and makes names from it', () => {
    expect(nameIsDNSSubdomain('web-', true)).toEqual([]);
    expect(nameIsDNSSubdomain('web-', false).length).toBe(1);
    expect(nameIsDNSLabel('a-', true)).toEqual([]);
    let i = 0;
    const seq = [0, 0.2, 0.5, 0.8, 0.99];
    expect(generateName('web-', () => seq[i++ % seq.length] ?? 0)).toBe('web-bhr49');
    expect(generateName(repeat('a', 70), () => 0)).toBe(repeat('a', 58) + 'bbbbb');
  });
});

describe('field errors', () => {
  const p = FieldPath.of('spec', 'containers').index(0).child('image');

  it('prints paths and bodies as field.Error does', () => {
    expect(p.toString()).toBe('spec.containers[0].image');
    expect(FieldPath.of('metadata', 'labels').key('app').toString()).toBe('metadata.labels[app]');
    expect(errorString(fieldError.required(p))).toBe('spec.containers[0].image: Required value');
    expect(errorString(fieldError.required(p, 'must be set'))).toBe('spec.containers[0].image: Required value: must be set');
    expect(errorString(fieldError.invalid(p, 'a"b', 'bad'))).toBe('spec.containers[0].image: Invalid value: "a\\"b": bad');
    expect(errorString(fieldError.invalid(p, 5, 'must be greater than or equal to 0'))).toBe('spec.containers[0].image: Invalid value: 5: must be greater than or equal to 0');
    expect(errorString(fieldError.notSupported(FieldPath.of('spec', 'restartPolicy'), 'Sometimes', ['Always', 'OnFailure', 'Never']))).toBe(
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    );
    expect(errorString(fieldError.duplicate(FieldPath.of('spec', 'containers').index(1).child('name'), 'web'))).toBe('spec.containers[1].name: Duplicate value: "web"');
    expect(errorString(fieldError.forbidden(FieldPath.of('spec'), 'pod updates may not change fields other than `spec.containers[*].image`'))).toBe(
      'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`',
    );
    expect(errorString(fieldError.tooLong(FieldPath.of('metadata', 'annotations'), 262144))).toBe('metadata.annotations: Too long: may not be more than 262144 bytes');
    expect(errorString(fieldError.immutable(FieldPath.of('spec', 'selector'), { goSyntax: 'v1.LabelSelector{...}' }))).toBe(
      'spec.selector: Invalid value: v1.LabelSelector{...}: field is immutable',
    );
    expect(errorString(fieldError.tooMany(FieldPath.of('spec', 'x'), 5, 3))).toBe('spec.x: Too many: 5: must have at most 3 items');
    expect(errorBody(fieldError.invalid(p, null, 'x'))).toBe('Invalid value: null: x');
    expect(goQuote('tab\tnul\x00é')).toBe('"tab\\tnul\\x00é"');
  });

  it('aggregates as ErrorList.ToAggregate does', () => {
    const a = fieldError.required(FieldPath.of('a'));
    const b = fieldError.invalid(FieldPath.of('b'), 'x', 'bad');
    expect(aggregateMessage([])).toBeUndefined();
    expect(aggregateMessage([a])).toBe('a: Required value');
    expect(aggregateMessage([a, b, a])).toBe('[a: Required value, b: Invalid value: "x": bad]');
  });

  it('builds the 422 Status kubectl prints from', () => {
    const s = invalidStatus({ group: '', kind: 'Pod' }, 'x', [fieldError.required(FieldPath.of('spec', 'containers').index(0).child('image'))]);
    expect(s).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Pod "x" is invalid: spec.containers[0].image: Required value',
      reason: 'Invalid',
      details: { name: 'x', kind: 'Pod', causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[0].image' }] },
      code: 422,
    });
    const d = invalidStatus({ group: 'apps', kind: 'Deployment' }, 'web', [
      fieldError.invalid(FieldPath.of('spec', 'replicas'), -1, 'must be greater than or equal to 0'),
      fieldError.required(FieldPath.of('spec', 'selector')),
    ]);
    expect(d.message).toBe('Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.selector: Required value]');
    expect(d.details?.group).toBe('apps');
    expect(Object.keys(d)).toEqual(['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code']);
  });
});

describe('ObjectMeta', () => {
  const rules = { namespaced: true, name: nameIsDNSSubdomain };

  it('accepts a valid object and reports each problem with its path', () => {
    expect(validateObjectMeta({ name: 'web', namespace: 'default', labels: { app: 'web' }, annotations: { 'example.com/x': 'y' } }, rules)).toEqual([]);
    const errs = validateObjectMeta(
      {
        generateName: 'Bad_',
        namespace: '',
        generation: -1,
        labels: { 'a/b/c': 'x', ok: '-bad' },
        annotations: { 'Example.com/Up': 'fine', 'a b': 'no' },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'b', uid: '2', controller: true },
          { apiVersion: '', kind: '', name: '', uid: '' },
        ],
        finalizers: ['orphan', 'foregroundDeletion', 'bad finalizer'],
        managedFields: [{ manager: 'x', operation: 'Patch', fieldsType: 'FieldsV2' }],
      },
      rules,
    ).map(errorString);
    expect(errs[0]).toMatch(/^metadata\.generateName: Invalid value: "Bad_": a lowercase RFC 1123 subdomain/);
    expect(errs).toContain('metadata.name: Required value: name or generateName is required');
    expect(errs).toContain('metadata.namespace: Required value');
    expect(errs).toContain('metadata.generation: Invalid value: -1: must be greater than or equal to 0');
    expect(errs.some((e) => e.startsWith('metadata.labels: Invalid value: "a/b/c": a qualified name'))).toBe(true);
    expect(errs.some((e) => e.startsWith('metadata.labels: Invalid value: "-bad": a valid label must be'))).toBe(true);
    expect(errs.some((e) => e.startsWith('metadata.annotations: Invalid value: "a b": name part'))).toBe(true);
    expect(errs.some((e) => e.includes('"Example.com/Up"'))).toBe(false);
    expect(errs.some((e) => e.startsWith('metadata.ownerReferences: Invalid value:') && e.endsWith('Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and ReplicaSet/b'))).toBe(true);
    expect(errs).toContain('metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty');
    expect(errs).toContain('metadata.ownerReferences.uid: Invalid value: "": uid must not be empty');
    expect(errs.some((e) => e.startsWith('metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion", "bad finalizer"}: finalizer orphan and foregroundDeletion cannot be both set'))).toBe(true);
    expect(errs).toContain('metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`');
    expect(errs).toContain('metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`');
  });

  it('forbids a namespace on cluster-scoped kinds and limits annotations to 256 KiB', () => {
    expect(validateObjectMeta({ name: 'n1', namespace: 'x' }, { namespaced: false, name: nameIsDNSSubdomain }).map(errorString)).toEqual([
      'metadata.namespace: Forbidden: not allowed on this type',
    ]);
    const big = { a: 'x'.repeat(256 * 1024) };
    expect(validateObjectMeta({ name: 'a', namespace: 'd', annotations: big }, rules).map(errorString)).toEqual([
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    ]);
    expect(validateObjectMeta({ name: 'a', namespace: 'd', annotations: { a: 'x'.repeat(256 * 1024 - 1) } }, rules)).toEqual([]);
  });

  it('checks what an update may not change', () => {
    const old = { name: 'a', namespace: 'd', uid: 'u1', resourceVersion: '5', generation: 2, creationTimestamp: '2024-01-01T00:00:00Z', deletionTimestamp: '2024-01-02T00:00:00Z', finalizers: ['a/b'] };
    const errs = validateObjectMetaUpdate({ ...old, name: 'b', uid: 'u2', resourceVersion: '', generation: 1, finalizers: ['a/b', 'c/d'] }, old).map(errorString);
    expect(errs).toEqual([
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"c/d"}',
      'metadata.resourceVersion: Invalid value: "": must be specified for an update',
      'metadata.generation: Invalid value: 1: must not be decremented',
      'metadata.name: Invalid value: "b": field is immutable',
      'metadata.uid: Invalid value: "u2": field is immutable',
    ]);
    expect(validateObjectMetaUpdate({ ...old, labels: { x: 'y' } }, old)).toEqual([]);
  });
});

describe('IntOrString', () => {
  it('scales percentages as GetScaledValueFromIntOrPercent does', () => {
    expect(scaledValueFromIntOrPercent(123, 0, false)).toBe(123);
    expect(scaledValueFromIntOrPercent('90%', 100, true)).toBe(90);
    expect(scaledValueFromIntOrPercent('90%', 95, true)).toBe(86);
    expect(scaledValueFromIntOrPercent('90%', 95, false)).toBe(85);
    // A Deployment's defaults: 25% surge of 10 replicas rounds up, 25% unavailable rounds down.
    expect(scaledValueFromIntOrPercent('25%', 10, true)).toBe(3);
    expect(scaledValueFromIntOrPercent('25%', 10, false)).toBe(2);
    expect(scaledValueFromIntOrPercent('25%', 1, true)).toBe(1);
    expect(scaledValueFromIntOrPercent('25%', 1, false)).toBe(0);
    expect(() => scaledValueFromIntOrPercent('%', 10, true)).toThrow('invalid value for IntOrString: invalid value "%": strconv.Atoi: parsing "": invalid syntax');
    expect(() => scaledValueFromIntOrPercent('90#', 10, true)).toThrow('invalid value for IntOrString: invalid type: string is not a percentage');
    expect(() => scaledValueFromIntOrPercent('#%', 10, true)).toThrow('invalid value for IntOrString');
    expect(() => scaledValueFromIntOrPercent('90', 10, true)).toThrow('string is not a percentage');
    expect(() => scaledValueFromIntOrPercent(undefined, 10, true)).toThrow('nil value for IntOrString');
  });

  it('parses and validates as intstr and apps validation do', () => {
    expect(parseIntOrString('0')).toBe(0);
    expect(parseIntOrString('2147483647')).toBe(2147483647);
    expect(parseIntOrString('-2147483648')).toBe(-2147483648);
    expect(parseIntOrString('2147483648')).toBe('2147483648');
    expect(parseIntOrString('25%')).toBe('25%');
    const p = FieldPath.of('spec', 'strategy', 'rollingUpdate', 'maxSurge');
    expect(validatePositiveIntOrPercent('25%', p)).toEqual([]);
    expect(validatePositiveIntOrPercent(-1, p).map(errorString)).toEqual(['spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0']);
    expect(validatePositiveIntOrPercent('abc', p).map(errorString)).toEqual([
      "spec.strategy.rollingUpdate.maxSurge: Invalid value: abc: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    ]);
    expect(isNotMoreThan100Percent('120%', p).map(errorString)).toEqual(['spec.strategy.rollingUpdate.maxSurge: Invalid value: 120%: must not be greater than 100%']);
    expect(isNotMoreThan100Percent('100%', p)).toEqual([]);
  });
});
