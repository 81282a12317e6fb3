// Label and field selectors against the cases of apimachinery's own tests (pkg/labels/selector_test.go,
// pkg/fields/selector_test.go, meta/v1 helpers): the grammar, the printed forms, matching, and the
// error messages clients see for bad selectors.
import { describe, expect, it } from 'vitest';
import { escapeValue, fieldLabelNotSupported, FieldSelector, parseFieldSelector, unescapeValue } from '../../src/api/field-selector.js';
import { formatLabelSelector, labelSelectorAsSelector, parseToLabelSelector, validateLabelSelector } from '../../src/api/label-selector.js';
import { newRequirement, parseSelector, Selector } from '../../src/api/labels-selector.js';
import { FieldPath } from '../../src/api/field-path.js';
import { errorString } from '../../src/api/field-errors.js';

function parseError(s: string): string {
  try {
    parseSelector(s);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${s} parsed`);
}

describe('label selector grammar', () => {
  it.each(['x=a,y=b,z=c', '', 'x!=a,y=b', 'x=', 'x= ', 'x=,z= ', 'x= ,z= ', '!x', 'x>1', 'x>1,z<5'])('parses %j and prints it back', (s) => {
    expect(parseSelector(s).toString()).toBe(s.replaceAll(' ', ''));
  });

  it.each(['x=a||y=b', 'x==a==b', '!x=a', 'x<a', 'x,,y', ',x,y', 'x nott in (y)', 'a in (xyz),', 'a in (xyz)b notin ()', 'a in (xyz abc)', 'a notin(', 'a (', '('])(
    'rejects %j',
    (s) => {
      expect(() => parseSelector(s)).toThrow();
    },
  );

  it('parses deterministically, sorted by key', () => {
    expect(parseSelector('x=a,a=x').toString()).toBe(parseSelector('a=x,x=a').toString());
    expect(parseSelector('x notin (abc,,def),bar,z in (),w').toString()).toBe('bar,w,x notin (,abc,def),z in ()');
  });

  it.each([
    ['\rx', 'x'],
    ['this-is-a-dns.domain.com/key-with-dash', 'this-is-a-dns.domain.com/key-with-dash'],
    ['this-is-another-dns.domain.com/key-with-dash in (so,what)', 'this-is-another-dns.domain.com/key-with-dash in (so,what)'],
    ['0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)', '0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)'],
    ['foo  in\t (abc)', 'foo in (abc)'],
    ['x notin\n (abc)', 'x notin (abc)'],
    ['x  notin\t\t\t(abc,def)', 'x notin (abc,def)'],
    ['x in (abc,)', 'x in (,abc)'],
    ['x in ()', 'x in ()'],
    ['x,y in (a)', 'x,y in (a)'],
    ['x notin ( )', 'x notin ()'],
    ['x notin (, a)', 'x notin (,a)'],
    ['a ', 'a'],
    ['a in (x,y,notin, z,in)', 'a in (in,notin,x,y,z)'],
    ['x=a,y!=b,z in (h,i,j)', 'x=a,y!=b,z in (h,i,j)'],
  ])('parses %j as %j', (input, want) => {
    expect(parseSelector(input).toString()).toBe(want);
  });

  it('gives apimachinery error messages', () => {
    expect(parseError('x=a||y=b')).toMatch(/^unable to parse requirement: values\[0\]\[x\]: Invalid value: "a\|\|y": /);
    expect(parseError('a in')).toBe("unable to parse requirement: found '' expected: '('");
    expect(parseError('(')).toBe("found '(', expected: !, identifier, or 'end of string'");
    expect(parseError('a (')).toBe("unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt");
    expect(parseError('x,,y')).toBe("found ',', expected: identifier after ','");
    expect(parseError('a in (xyz)b notin ()')).toBe("found 'b', expected: ',' or 'end of string'");
    expect(parseError('a in (xyz abc)')).toBe("unable to parse requirement: found 'abc', expected: ',' or ')'");
    expect(parseError('x<a')).toBe("unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer");
    expect(parseError('a b')).toBe("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
    expect(parseError('a_=b')).toBe(
      'unable to parse requirement: <nil>: Invalid value: "a_": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')',
    );
  });

  it('matches as Kubernetes matches', () => {
    const cases: readonly (readonly [string, Record<string, string>, boolean])[] = [
      ['x=y', { x: 'y' }, true], ['x=y,z=w', { x: 'y', z: 'w' }, true], ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
      ['notin=in', { notin: 'in' }, true], ['x', { x: 'z' }, true], ['!x', { y: 'z' }, true], ['x>1', { x: '2' }, true],
      ['x<1', { x: '0' }, true], ['x=z', {}, false], ['x=y', { x: 'z' }, false], ['x=y,z=w', { x: 'w', z: 'w' }, false],
      ['x!=y,z!=w', { x: 'z', z: 'w' }, false], ['x', { y: 'z' }, false], ['!x', { x: 'z' }, false], ['x>1', { x: '0' }, false],
      ['x<1', { x: '2' }, false], ['x in (foo),y notin (alpha)', { x: 'foo', y: 'baz' }, true],
      ['x in (foo),y in (alpha)', { x: 'foo', y: 'baz' }, false], ['x notin (),y', { y: '' }, true],
      ['!x,y', { y: '' }, true], ['x notin (),!y', { y: '' }, false], ['x in ()', { y: 'baz' }, false],
      ['z>1', { z: 'v2' }, false],
    ];
    for (const [sel, labels, want] of cases) expect(parseSelector(sel).matches(labels), `${sel} on ${JSON.stringify(labels)}`).toBe(want);
    expect(Selector.everything().matches({ x: 'y' })).toBe(true);
    expect(Selector.nothing().matches({})).toBe(false);
    expect(parseSelector('').isEmpty()).toBe(true);
  });

  it('prints requirements as Requirement.String does', () => {
    const sel = Selector.of([
      newRequirement('x', 'in', ['def', 'abc']),
      newRequirement('y', 'notin', ['jkl']),
      newRequirement('z', 'exists', []),
    ]);
    expect(sel.toString()).toBe('x in (abc,def),y notin (jkl),z');
    expect(Selector.of([newRequirement('x', 'notin', ['abc', 'def']), newRequirement('y', '!=', ['jkl']), newRequirement('z', '!', [])]).toString()).toBe(
      'x notin (abc,def),y!=jkl,!z',
    );
    expect(Selector.of([newRequirement('x', '=', ['abc']), newRequirement('y', '==', ['jkl']), newRequirement('z', '!=', ['a']), newRequirement('z', 'exists', [])]).toString()).toBe(
      'x=abc,y==jkl,z!=a,z',
    );
    expect(Selector.of([newRequirement('x', 'gt', ['2']), newRequirement('y', 'lt', ['8']), newRequirement('z', 'exists', [])]).toString()).toBe('x>2,y<8,z');
  });

  it('validates requirements as NewRequirement does', () => {
    expect(() => newRequirement('x', 'in', [])).toThrow("values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty");
    expect(() => newRequirement('x', '=', ['a', 'b'])).toThrow('values: Invalid value: []string{"a", "b"}: exact-match compatibility requires one single value');
    expect(() => newRequirement('x', 'exists', ['a'])).toThrow('values: Invalid value: []string{"a"}: values set must be empty for exists and does not exist');
    expect(() => newRequirement('x', 'gt', ['1', '2'])).toThrow("for 'Gt', 'Lt' operators, exactly one value is required");
    expect(() => newRequirement('', 'exists', [])).toThrow('key: Invalid value: "": name part must be non-empty; name part must consist of');
    expect(() => newRequirement('x', 'in', ['a b'])).toThrow('values[0][x]: Invalid value: "a b": a valid label must be an empty string');
    expect(newRequirement('x/y', 'in', ['']).values).toEqual(['']);
  });

  it('reports an exact match where the selector pins a label', () => {
    const s = parseSelector('a=1,b in (2),c in (3,4),d!=5');
    expect(s.requiresExactMatch('a')).toBe('1');
    expect(s.requiresExactMatch('b')).toBe('2');
    expect(s.requiresExactMatch('c')).toBeUndefined();
    expect(s.requiresExactMatch('d')).toBeUndefined();
  });
});

describe('metav1.LabelSelector', () => {
  it('converts to a selector and prints it as Kubernetes does', () => {
    expect(formatLabelSelector({ matchLabels: { app: 'x' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] })).toBe('app=x,tier in (a,b)');
    expect(formatLabelSelector({ matchLabels: { foo: 'bar' } })).toBe('foo=bar');
    expect(formatLabelSelector({ matchExpressions: [{ key: 'k', operator: 'DoesNotExist' }, { key: 'a', operator: 'Exists' }] })).toBe('a,!k');
    expect(formatLabelSelector({})).toBe('<none>');
    expect(formatLabelSelector({ matchExpressions: [{ key: 'k', operator: 'Bogus', values: [] }] })).toBe('<error>');
    expect(labelSelectorAsSelector(null).matches({})).toBe(false);
    expect(labelSelectorAsSelector({}).matches({ a: 'b' })).toBe(true);
    const sel = labelSelectorAsSelector({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] });
    expect(sel.matches({ app: 'web', env: 'dev' })).toBe(true);
    expect(sel.matches({ app: 'web', env: 'prod' })).toBe(false);
    expect(() => labelSelectorAsSelector({ matchExpressions: [{ key: 'k', operator: 'Bogus' }] })).toThrow('"Bogus" is not a valid label selector operator');
  });

  it('validates with apimachinery messages', () => {
    const errs = validateLabelSelector(
      {
        matchLabels: { 'a b': 'c' },
        matchExpressions: [
          { key: 'k', operator: 'In', values: [] },
          { key: 'k', operator: 'Exists', values: ['x'] },
          { key: 'k', operator: 'Gt', values: ['1'] },
          { key: 'k', operator: 'In', values: ['a b'] },
        ],
      },
      FieldPath.of('spec', 'selector'),
    ).map(errorString);
    expect(errs[0]).toMatch(/^spec\.selector\.matchLabels: Invalid value: "a b": name part must consist of/);
    expect(errs).toContain("spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'");
    expect(errs).toContain("spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    expect(errs).toContain('spec.selector.matchExpressions[2].operator: Invalid value: "Gt": not a valid selector operator');
    expect(errs.some((e) => e.startsWith('spec.selector.matchExpressions[3].values[0]: Invalid value: "a b": a valid label'))).toBe(true);
  });

  it('parses a selector string back', () => {
    expect(parseToLabelSelector('app=web,tier in (b,a),!canary')).toEqual({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'canary', operator: 'DoesNotExist', values: [] },
        { key: 'tier', operator: 'In', values: ['a', 'b'] },
      ],
    });
    expect(() => parseToLabelSelector('x>1')).toThrow(`"gt" isn't supported in label selectors`);
    expect(() => parseToLabelSelector('x in')).toThrow(`couldn't parse the selector string "x in": unable to parse requirement: found '' expected: '('`);
  });
});

describe('field selectors', () => {
  it.each(['x=a,y=b,z=c', '', 'x!=a,y=b', 'x=a||y\\=b', 'x=a\\=\\=b'])('parses %j and prints it back', (s) => {
    expect(parseFieldSelector(s).toString()).toBe(s);
  });

  it.each(['x=a||y=b', 'x==a==b', 'x=a,b', 'x in (a)', 'x in (a,b,c)', 'x'])('rejects %j', (s) => {
    expect(() => parseFieldSelector(s)).toThrow();
  });

  it('gives Kubernetes messages', () => {
    expect(() => parseFieldSelector('x')).toThrow("invalid selector: 'x'; can't understand 'x'");
    expect(() => parseFieldSelector('x=a,b')).toThrow("invalid selector: 'x=a,b'; can't understand 'b'");
    expect(() => parseFieldSelector('x==a==b')).toThrow('invalid field selector: unescaped character in value: 61');
    expect(() => parseFieldSelector('k=\\a')).toThrow('invalid field selector: invalid escape sequence: \\a');
    expect(() => parseFieldSelector('k=\\')).toThrow('invalid field selector: invalid escape sequence: \\');
    expect(fieldLabelNotSupported('spec.foo').message).toBe('field label not supported: spec.foo');
  });

  it('escapes and unescapes values', () => {
    const cases: Record<string, string> = { '': '', a: 'a', '=': '\\=', ',': '\\,', '\\': '\\\\', '\\=\\,\\': '\\\\\\=\\\\\\,\\\\' };
    for (const [raw, escaped] of Object.entries(cases)) {
      expect(escapeValue(raw)).toBe(escaped);
      expect(unescapeValue(escaped)).toBe(raw);
    }
  });

  it('keeps escaped commas inside a term, sorts terms, and matches a flat field set', () => {
    const s = parseFieldSelector('involvedObject.name=a\\,b,involvedObject.namespace=default,involvedObject.uid=1');
    expect(s.requirements.map((r) => r.field)).toEqual(['involvedObject.name', 'involvedObject.namespace', 'involvedObject.uid']);
    expect(s.matches({ 'involvedObject.name': 'a,b', 'involvedObject.namespace': 'default', 'involvedObject.uid': '1' })).toBe(true);
    expect(s.matches({ 'involvedObject.name': 'a,b', 'involvedObject.namespace': 'default' })).toBe(false);
    expect(parseFieldSelector('status.phase!=Running').matches({ 'status.phase': 'Pending' })).toBe(true);
    expect(parseFieldSelector('spec.nodeName=').matches({})).toBe(true);
    expect(parseFieldSelector('x=a,a=x').toString()).toBe(parseFieldSelector('a=x,x=a').toString());
    expect(FieldSelector.everything().matches({ a: 'b' })).toBe(true);
    expect(parseFieldSelector('metadata.name=web').requiresExactMatch('metadata.name')).toBe('web');
  });

  it('lets a kind reject unsupported fields through transform', () => {
    const supported = new Set(['metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase']);
    const podFields = (field: string, value: string): { field: string; value: string } => {
      if (!supported.has(field)) throw fieldLabelNotSupported(field);
      return { field, value };
    };
    expect(parseFieldSelector('spec.nodeName=n1', podFields).toString()).toBe('spec.nodeName=n1');
    expect(() => parseFieldSelector('spec.foo=bar', podFields)).toThrow('field label not supported: spec.foo');
  });
});
