// The webhooks' half of the chain. Mutating webhooks run one after another in their configurations' order,
// each seeing the object as the previous one left it, their JSON patches applied in turn; validating
// webhooks run all at once, and any one's refusal refuses. A webhook that cannot be reached, times out or
// answers something unusable is a failure its failurePolicy decides (Fail: 500 InternalError, Ignore: go
// on); a denial becomes the client's Status (`admission webhook "x" denied the request: why`). Every call
// is an AdmissionRecord; warnings go to the client's Warning headers.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { applyJSONPatch, decodeJSONPatch, JSONPatchError } from '../../api/patch/json-patch.js';
import { changedPaths } from '../registry/changed-paths.js';
import { StatusError, statuses, type Status, type StatusDetails } from '../status.js';
import type { StoredObject } from '../storage/interface.js';
import type { WebhookStage } from './admission-chain.js';
import type { AdmissionAttributes, AdmissionRecord } from './interface.js';
import { WebhookCallError, WebhookClient, type ReviewResponse } from './webhook-client.js';
import type { Webhook, WebhookSource } from './webhook-config.js';
import { shouldCall, type NamespaceLabels } from './webhook-match.js';

export interface WebhookDispatcherOptions {
  readonly mutating: WebhookSource;
  readonly validating: WebhookSource;
  readonly namespaceLabels: NamespaceLabels;
  readonly client?: WebhookClient;
  readonly log: Logger;
}

type Obj = Record<string, unknown>;

const OPTIONS_KIND: Record<string, string> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' };

function withTypeMeta(o: StoredObject | undefined, attrs: AdmissionAttributes): StoredObject | null {
  if (o === undefined) return null;
  const k = attrs.kind;
  return { ...o, apiVersion: k.group === '' ? k.version : `${k.group}/${k.version}`, kind: k.kind };
}

/** AdmissionReview v1's request for `attrs`, as kube-apiserver fills it. */
export function admissionReview(attrs: AdmissionAttributes, uid: string): Obj {
  const kind = { group: attrs.kind.group, version: attrs.kind.version, kind: attrs.kind.kind };
  const resource = { group: attrs.resource.group, version: attrs.resource.version, resource: attrs.resource.resource };
  const optionsKind = OPTIONS_KIND[attrs.operation];
  const options = attrs.options ?? (optionsKind !== undefined ? { kind: optionsKind, apiVersion: 'meta.k8s.io/v1' } : undefined);
  return {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid,
      kind,
      resource,
      ...(attrs.subresource !== '' ? { subResource: attrs.subresource } : {}),
      requestKind: kind,
      requestResource: resource,
      ...(attrs.subresource !== '' ? { requestSubResource: attrs.subresource } : {}),
      ...(attrs.name !== '' ? { name: attrs.name } : {}),
      ...(attrs.namespace !== '' ? { namespace: attrs.namespace } : {}),
      operation: attrs.operation,
      userInfo: { username: attrs.user.name, ...(attrs.user.uid !== '' ? { uid: attrs.user.uid } : {}), groups: [...attrs.user.groups] },
      object: withTypeMeta(attrs.object, attrs),
      oldObject: withTypeMeta(attrs.oldObject, attrs),
      dryRun: attrs.dryRun,
      ...(options !== undefined ? { options } : {}),
    },
  };
}

/** ToStatusErr: the webhook's own Status, at least 400, its message prefixed with who denied. */
export function denialStatus(webhook: string, s: Obj | undefined): Status {
  const deniedBy = `admission webhook ${JSON.stringify(webhook)} denied the request`;
  const msg = typeof s?.['message'] === 'string' ? s['message'] : '';
  const reason = typeof s?.['reason'] === 'string' ? s['reason'] : '';
  const code = typeof s?.['code'] === 'number' && s['code'] >= 400 && s['code'] <= 599 ? s['code'] : 400;
  const details = typeof s?.['details'] === 'object' && s['details'] !== null ? (s['details'] as StatusDetails) : undefined;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: msg !== '' ? `${deniedBy}: ${msg}` : reason !== '' ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`,
    ...(reason !== '' ? { reason } : {}),
    ...(details !== undefined ? { details } : {}),
    code,
  };
}

export class WebhookDispatcher implements WebhookStage {
  private readonly client: WebhookClient;
  private readonly log: Logger;

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.client = opts.client ?? new WebhookClient();
    this.log = opts.log.child({ component: 'admission-webhooks' });
  }

  private async matching(hooks: readonly Webhook[], attrs: AdmissionAttributes): Promise<Webhook[]> {
    const out: Webhook[] = [];
    for (const h of hooks) if (await shouldCall(h, attrs, this.opts.namespaceLabels)) out.push(h);
    return out;
  }

  /** Calls one webhook: its verified answer, or undefined when its failure is ignored. Throws to refuse. */
  private async call(hook: Webhook, attrs: AdmissionAttributes, records: AdmissionRecord[], t0: number): Promise<ReviewResponse | undefined> {
    const stage = hook.mutating ? 'mutating' : 'validating';
    const refuse = (status: Status): never => {
      records.push({ stage, plugin: hook.name, allowed: false, message: status.message, changedPaths: [], latencyMs: performance.now() - t0 });
      throw new StatusError(status);
    };
    // v1 only stores None and NoneOnDryRun; anything else (an older object) may not see a dry run.
    if (attrs.dryRun && hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') {
      refuse(statuses.badRequest(`admission webhook ${JSON.stringify(hook.name)} does not support dry run`));
    }
    const uid = randomUUID();
    try {
      const resp = await this.client.call(hook, admissionReview(attrs, uid), uid, attrs.signal);
      for (const w of resp.warnings) attrs.warn?.(w);
      if (!resp.allowed) refuse(denialStatus(hook.name, resp.status));
      return resp;
    } catch (e) {
      if (!(e instanceof WebhookCallError)) throw e;
      return this.failed(hook, e.message, records, t0);
    }
  }

  private failed(hook: Webhook, reason: string, records: AdmissionRecord[], t0: number): undefined {
    const stage = hook.mutating ? 'mutating' : 'validating';
    const message = `failed calling webhook ${JSON.stringify(hook.name)}: ${reason}`;
    if (hook.failurePolicy === 'Ignore') {
      this.log.warn({ webhook: hook.name, err: reason }, 'failed calling webhook, failing open');
      records.push({ stage, plugin: hook.name, allowed: true, message: `${message} (ignored: failurePolicy Ignore)`, changedPaths: [], latencyMs: performance.now() - t0 });
      return undefined;
    }
    this.log.warn({ webhook: hook.name, err: reason }, 'failed calling webhook, failing closed');
    const status = statuses.internalError(message);
    records.push({ stage, plugin: hook.name, allowed: false, message: status.message, changedPaths: [], latencyMs: performance.now() - t0 });
    throw new StatusError(status);
  }

  async mutate(attrs: AdmissionAttributes, records: AdmissionRecord[]): Promise<StoredObject | undefined> {
    const first = await this.mutatePass(await this.opts.mutating.webhooks(), attrs, attrs.object, records, false);
    // reinvocationPolicy IfNeeded: one more call for those whose output a later webhook changed.
    if (first.reinvoke.length === 0) return first.obj;
    return (await this.mutatePass(first.reinvoke, attrs, first.obj, records, true)).obj;
  }

  private async mutatePass(
    hooks: readonly Webhook[],
    attrs: AdmissionAttributes,
    start: StoredObject | undefined,
    records: AdmissionRecord[],
    reinvoked: boolean,
  ): Promise<{ obj: StoredObject | undefined; reinvoke: Webhook[] }> {
    let obj = start;
    let changes = 0;
    const reinvocable: { hook: Webhook; changesAfter: number }[] = [];
    for (const hook of hooks) {
      const current: AdmissionAttributes = { ...attrs, ...(obj !== undefined ? { object: obj } : {}) };
      if (!(await shouldCall(hook, current, this.opts.namespaceLabels))) continue;
      const t0 = performance.now();
      const resp = await this.call(hook, current, records, t0);
      if (resp === undefined) continue;
      let paths: string[] = [];
      if (resp.patch !== undefined) {
        const patched = this.patch(hook, resp, obj, attrs.defaults, records, t0);
        if (patched === undefined) continue;
        paths = changedPaths(obj, patched);
        obj = patched;
      }
      if (paths.length > 0) changes++;
      if (hook.reinvoke) reinvocable.push({ hook, changesAfter: changes });
      const note = reinvoked ? { message: 'reinvoked (reinvocationPolicy IfNeeded)' } : {};
      records.push({ stage: 'mutating', plugin: hook.name, allowed: true, ...note, changedPaths: paths, latencyMs: performance.now() - t0 });
    }
    return { obj, reinvoke: reinvocable.filter((r) => changes > r.changesAfter).map((r) => r.hook) };
  }

  /** The object after the webhook's patch; undefined when an unusable patch is ignored by failurePolicy. */
  private patch(
    hook: Webhook,
    resp: ReviewResponse,
    obj: StoredObject | undefined,
    defaults: ((o: StoredObject) => void) | undefined,
    records: AdmissionRecord[],
    t0: number,
  ): StoredObject | undefined {
    if (resp.patchType !== 'JSONPatch') return this.failed(hook, `unsupported patch type ${JSON.stringify(resp.patchType ?? '')}`, records, t0);
    let ops: unknown;
    try {
      ops = decodeJSONPatch(JSON.parse(resp.patch?.toString('utf8') ?? ''));
    } catch (e) {
      return this.failed(hook, `received undecodable patch in webhook response: ${(e as Error).message}`, records, t0);
    }
    if (Array.isArray(ops) && ops.length === 0) return obj;
    const internal = (message: string): never => {
      const status = statuses.internalError(message);
      records.push({ stage: 'mutating', plugin: hook.name, allowed: false, message: status.message, changedPaths: [], latencyMs: performance.now() - t0 });
      throw new StatusError(status);
    };
    if (obj === undefined) internal(`admission webhook ${JSON.stringify(hook.name)} attempted to modify the object, which is not supported for this operation`);
    try {
      const out = applyJSONPatch(structuredClone(obj), ops);
      if (typeof out !== 'object' || out === null || Array.isArray(out)) return internal(`admission webhook ${JSON.stringify(hook.name)} patched the object into something that is not an object`);
      const o = out as StoredObject;
      if (typeof o.metadata !== 'object' || o.metadata === null) return internal(`admission webhook ${JSON.stringify(hook.name)} removed the object's metadata`);
      // What the patch left out gets its defaults again, as Kubernetes defaults a webhook's result.
      defaults?.(o);
      return o;
    } catch (e) {
      return internal(e instanceof JSONPatchError ? e.detail : (e as Error).message);
    }
  }

  async validate(attrs: AdmissionAttributes, records: AdmissionRecord[]): Promise<void> {
    const hooks = await this.matching(await this.opts.validating.webhooks(), attrs);
    if (hooks.length === 0) return;
    // All at once; records kept in the configurations' order, and the first refusal in that order answers.
    const results = await Promise.all(
      hooks.map(async (hook) => {
        const own: AdmissionRecord[] = [];
        const t0 = performance.now();
        try {
          const resp = await this.call(hook, attrs, own, t0);
          if (resp !== undefined) own.push({ stage: 'validating', plugin: hook.name, allowed: true, changedPaths: [], latencyMs: performance.now() - t0 });
          return { own };
        } catch (e) {
          return { own, error: e };
        }
      }),
    );
    for (const r of results) records.push(...r.own);
    const refused = results.find((r) => r.error !== undefined);
    if (refused !== undefined) throw refused.error;
  }

  close(): void {
    this.client.close();
  }
}
