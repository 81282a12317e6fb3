// Which requests a webhook rule matches (pure logic): resources with subresources and wildcards, scopes
// (Namespaces are cluster-scoped), operations, groups and versions.
import { describe, expect, it } from 'vitest';
import { attrs } from './attrs.js';
import { ruleMatches } from '../../../src/apiserver/admission/webhook-match.js';
import type { WebhookRule } from '../../../src/apiserver/admission/webhook-config.js';


const rule = (r: Partial<WebhookRule>): WebhookRule => ({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: '*', ...r });

describe('webhook rules', () => {
  it('match resources and subresources as Kubernetes spells them', () => {
    const status = attrs({ subresource: 'status', operation: 'UPDATE' });
    expect(ruleMatches(rule({ resources: ['pods'] }), attrs())).toBe(true);
    expect(ruleMatches(rule({ resources: ['pods'] }), status)).toBe(false);
    expect(ruleMatches(rule({ resources: ['pods/status'] }), status)).toBe(true);
    expect(ruleMatches(rule({ resources: ['pods/*'] }), status)).toBe(true);
    // As Kubernetes' matcher does it, `pods/*` takes the main resource too (its subresource '' matches '*').
    expect(ruleMatches(rule({ resources: ['pods/*'] }), attrs())).toBe(true);
    expect(ruleMatches(rule({ resources: ['*'] }), status)).toBe(false);
    expect(ruleMatches(rule({ resources: ['*/*'] }), status)).toBe(true);
    expect(ruleMatches(rule({ resources: ['*/status'] }), status)).toBe(true);
    expect(ruleMatches(rule({ resources: ['deployments'] }), attrs())).toBe(false);
  });

  it('match operations, groups and versions, with wildcards', () => {
    expect(ruleMatches(rule({ operations: ['UPDATE'] }), attrs())).toBe(false);
    expect(ruleMatches(rule({ operations: ['CREATE', 'UPDATE'] }), attrs())).toBe(true);
    expect(ruleMatches(rule({ apiGroups: ['apps'] }), attrs())).toBe(false);
    expect(ruleMatches(rule({ apiGroups: [''] }), attrs())).toBe(true);
    expect(ruleMatches(rule({ apiVersions: ['v1beta1'] }), attrs())).toBe(false);
  });

  it('match scopes, with Namespaces cluster-scoped', () => {
    const ns = attrs({ resource: { group: '', version: 'v1', resource: 'namespaces' }, namespace: 'x' });
    const node = attrs({ resource: { group: '', version: 'v1', resource: 'nodes' }, namespace: '' });
    expect(ruleMatches(rule({ scope: 'Namespaced' }), attrs())).toBe(true);
    expect(ruleMatches(rule({ scope: 'Namespaced' }), ns)).toBe(false);
    expect(ruleMatches(rule({ scope: 'Cluster' }), ns)).toBe(true);
    expect(ruleMatches(rule({ scope: 'Cluster' }), node)).toBe(true);
    expect(ruleMatches(rule({ scope: 'Cluster' }), attrs())).toBe(false);
  });
});
