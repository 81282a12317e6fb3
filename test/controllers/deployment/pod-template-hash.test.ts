import { describe, expect, it } from 'vitest';
import { computeHash, equalIgnoreHash, safeEncodeString } from '../../../src/controllers/deployment/pod-template-hash.js';

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } };

describe('pod-template-hash', () => {
  it('is stable, independent of key order, and uses only the safe alphabet', () => {
    const h = computeHash(template);
    expect(computeHash({ spec: { containers: [{ image: 'img:1', name: 'c' }] }, metadata: { labels: { app: 'web' } } })).toBe(h);
    expect(h).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  });

  it('changes with the template and with the collision count', () => {
    const h = computeHash(template);
    expect(computeHash({ ...template, spec: { containers: [{ name: 'c', image: 'img:2' }] } })).not.toBe(h);
    expect(computeHash(template, 1)).not.toBe(h);
    expect(computeHash(template, 1)).not.toBe(computeHash(template, 2));
  });

  it('SafeEncodeString maps digits as Kubernetes does', () => {
    // '0'..'9' are codes 48..57; 48 % 27 = 21 → '4'.
    expect(safeEncodeString('0123456789')).toBe('456789bcdf');
  });

  it('equalIgnoreHash ignores only the pod-template-hash label', () => {
    const withHash = { ...template, metadata: { labels: { app: 'web', 'pod-template-hash': 'abc' } } };
    expect(equalIgnoreHash(template, withHash)).toBe(true);
    expect(equalIgnoreHash({ metadata: { labels: { 'pod-template-hash': 'x' } }, spec: {} }, { spec: {} })).toBe(true);
    expect(equalIgnoreHash(template, { ...withHash, metadata: { labels: { app: 'db', 'pod-template-hash': 'abc' } } })).toBe(false);
  });
});
