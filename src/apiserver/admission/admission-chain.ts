// The admission chain in Kubernetes' order: the built-in plugins' mutating halves in their order, then the
// mutating webhooks (admit); after the registry's validation, the plugins' validating halves, then the
// validating webhooks (validate). Each decision, and each change a plugin makes, becomes an AdmissionRecord.
import type { StoredObject } from '../storage/interface.js';
import { changedPaths } from '../registry/changed-paths.js';
import type { AdmissionAttributes, AdmissionChain, AdmissionRecord } from './interface.js';

/** One built-in plugin: `handles` says whether it looks at the request at all. */
export interface AdmissionPlugin {
  readonly name: string;
  handles(attrs: AdmissionAttributes): boolean;
  /** Changes `obj` (a private copy of the object, absent for DELETE) in place, or throws StatusError. */
  admit?(attrs: AdmissionAttributes, obj: StoredObject | undefined): void | Promise<void>;
  /** Throws StatusError to refuse. */
  validate?(attrs: AdmissionAttributes): void | Promise<void>;
}

/** The webhooks' half of the chain (src/apiserver/admission/webhook-dispatcher.ts). */
export interface WebhookStage {
  mutate(attrs: AdmissionAttributes, records: AdmissionRecord[]): Promise<StoredObject | undefined>;
  validate(attrs: AdmissionAttributes, records: AdmissionRecord[]): Promise<void>;
  close?(): void;
}

function denial(stage: 'mutating' | 'validating', plugin: string, e: unknown, t0: number): AdmissionRecord {
  const message = e instanceof Error ? e.message : String(e);
  return { stage, plugin, allowed: false, message, changedPaths: [], latencyMs: performance.now() - t0 };
}

export class Chain implements AdmissionChain {
  constructor(
    private readonly plugins: readonly AdmissionPlugin[],
    private readonly webhooks?: WebhookStage,
  ) {}

  async admit(attrs: AdmissionAttributes, records: AdmissionRecord[]): Promise<StoredObject | undefined> {
    let obj = attrs.object === undefined ? undefined : structuredClone(attrs.object);
    for (const p of this.plugins) {
      if (p.admit === undefined || !p.handles(attrs)) continue;
      const t0 = performance.now();
      const before = obj === undefined ? undefined : structuredClone(obj);
      try {
        await p.admit({ ...attrs, ...(obj !== undefined ? { object: obj } : {}) }, obj);
      } catch (e) {
        records.push(denial('mutating', p.name, e, t0));
        throw e;
      }
      const paths = obj === undefined ? [] : changedPaths(before, obj);
      // Plugins that looked and changed nothing made no decision worth keeping.
      if (paths.length > 0) records.push({ stage: 'mutating', plugin: p.name, allowed: true, changedPaths: paths, latencyMs: performance.now() - t0 });
    }
    if (this.webhooks !== undefined) obj = await this.webhooks.mutate({ ...attrs, ...(obj !== undefined ? { object: obj } : {}) }, records);
    return obj;
  }

  async validate(attrs: AdmissionAttributes, records: AdmissionRecord[]): Promise<void> {
    for (const p of this.plugins) {
      if (p.validate === undefined || !p.handles(attrs)) continue;
      const t0 = performance.now();
      try {
        await p.validate(attrs);
      } catch (e) {
        records.push(denial('validating', p.name, e, t0));
        throw e;
      }
    }
    if (this.webhooks !== undefined) await this.webhooks.validate(attrs, records);
  }

  close(): void {
    this.webhooks?.close?.();
  }
}
