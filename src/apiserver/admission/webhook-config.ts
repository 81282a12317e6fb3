// Mutating- and ValidatingWebhookConfigurations as the dispatcher uses them: each webhook compiled once
// (selectors parsed, timeout bounded, CA decoded) and kept until its configuration changes. They are read
// from the API server's own watch cache (a list at resourceVersion 0, served from memory), as Kubernetes'
// webhook source reads its informer, so no request costs a store read. Webhooks run in the order of their
// configurations' names, then as listed.
import { labelSelectorAsSelector, type LabelSelector } from '../../api/label-selector.js';
import type { Selector } from '../../api/labels-selector.js';
import type { StoredObject } from '../storage/interface.js';

export type FailurePolicy = 'Fail' | 'Ignore';

export interface WebhookRule {
  readonly operations: readonly string[];
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly resources: readonly string[];
  /** '*', 'Cluster' or 'Namespaced'. */
  readonly scope: string;
}

export interface Webhook {
  readonly name: string;
  readonly configuration: string;
  readonly mutating: boolean;
  readonly rules: readonly WebhookRule[];
  readonly failurePolicy: FailurePolicy;
  readonly timeoutMs: number;
  readonly sideEffects: string;
  readonly reinvoke: boolean;
  readonly namespaceSelector: Selector;
  readonly objectSelector: Selector;
  readonly url?: string;
  /** PEM bundle from clientConfig.caBundle; none: the system's roots. */
  readonly caPem?: string;
  /** Why the webhook cannot be called as configured (a service reference, a bad selector): a call failure. */
  readonly unusable?: string;
}

/** Kubernetes' default and ceiling for timeoutSeconds. */
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;
export const MAX_WEBHOOK_TIMEOUT_SECONDS = 30;

type Obj = Record<string, unknown>;

function rec(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function str(v: unknown, dflt = ''): string {
  return typeof v === 'string' && v !== '' ? v : dflt;
}

function selector(v: unknown): Selector {
  // An absent selector matches everything (the registry defaults it to {}).
  return labelSelectorAsSelector(v === undefined || v === null ? {} : (v as LabelSelector));
}

function compileOne(config: string, mutating: boolean, w: Obj): Webhook {
  const name = str(w['name']);
  const timeout = typeof w['timeoutSeconds'] === 'number' ? w['timeoutSeconds'] : DEFAULT_WEBHOOK_TIMEOUT_SECONDS;
  const cc = rec(w['clientConfig']);
  const base = {
    name,
    configuration: config,
    mutating,
    rules: (Array.isArray(w['rules']) ? w['rules'] : []).map((r) => {
      const o = rec(r);
      return { operations: strings(o['operations']), apiGroups: strings(o['apiGroups']), apiVersions: strings(o['apiVersions']), resources: strings(o['resources']), scope: str(o['scope'], '*') };
    }),
    failurePolicy: (w['failurePolicy'] === 'Ignore' ? 'Ignore' : 'Fail') as FailurePolicy,
    timeoutMs: Math.min(Math.max(1, timeout), MAX_WEBHOOK_TIMEOUT_SECONDS) * 1000,
    sideEffects: str(w['sideEffects']),
    reinvoke: w['reinvocationPolicy'] === 'IfNeeded',
  };
  let namespaceSelector: Selector;
  let objectSelector: Selector;
  try {
    namespaceSelector = selector(w['namespaceSelector']);
    objectSelector = selector(w['objectSelector']);
  } catch (e) {
    const nothing = labelSelectorAsSelector(null);
    return { ...base, namespaceSelector: nothing, objectSelector: nothing, unusable: `invalid selector: ${(e as Error).message}` };
  }
  const url = str(cc['url']);
  const ca = str(cc['caBundle']);
  const common = { ...base, namespaceSelector, objectSelector };
  if (url === '') {
    const svc = rec(cc['service']);
    const why = Object.keys(svc).length > 0 ? `clientConfig.service (${str(svc['namespace'])}/${str(svc['name'])}) is not supported by Setpoint: give clientConfig.url` : 'no clientConfig.url';
    return { ...common, unusable: why };
  }
  return { ...common, url, ...(ca !== '' ? { caPem: Buffer.from(ca, 'base64').toString('utf8') } : {}) };
}

export function compileConfigurations(items: readonly StoredObject[], mutating: boolean): Webhook[] {
  const sorted = [...items].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  return sorted.flatMap((c) => (Array.isArray(c['webhooks']) ? c['webhooks'] : []).map((w) => compileOne(c.metadata.name ?? '', mutating, rec(w))));
}

/** Lists one kind's configurations (from the watch cache); the source compiles them again only when they change. */
export type ConfigurationLister = () => Promise<readonly StoredObject[]>;

export class WebhookSource {
  private key = '';
  private compiled: Webhook[] = [];

  constructor(
    private readonly lister: ConfigurationLister,
    private readonly mutating: boolean,
  ) {}

  async webhooks(): Promise<readonly Webhook[]> {
    const items = await this.lister();
    const key = items.map((c) => `${c.metadata.name ?? ''}@${c.metadata.resourceVersion ?? ''}`).join(',');
    if (key !== this.key) {
      this.compiled = compileConfigurations(items, this.mutating);
      this.key = key;
    }
    return this.compiled;
  }
}
