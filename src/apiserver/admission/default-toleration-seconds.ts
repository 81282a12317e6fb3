// DefaultTolerationSeconds: every pod tolerates the node lifecycle's NoExecute taints (not-ready,
// unreachable) for a bounded time unless it says otherwise, so a node that goes away evicts its pods after
// 300 s rather than at once (Kubernetes' plugin of the same name, flags of the same names).
import type { StoredObject } from '../storage/interface.js';
import type { AdmissionPlugin } from './admission-chain.js';
import type { AdmissionAttributes } from './interface.js';

export const DEFAULT_TOLERATION_SECONDS = 'DefaultTolerationSeconds';
export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';

export interface TolerationSecondsOptions {
  /** --default-not-ready-toleration-seconds (300). */
  readonly notReadySeconds: number;
  /** --default-unreachable-toleration-seconds (300). */
  readonly unreachableSeconds: number;
}

type Obj = Record<string, unknown>;

/** A toleration that already covers `key`'s NoExecute taint: the same key or any key, NoExecute or any effect. */
function covers(t: Obj, key: string): boolean {
  const k = typeof t['key'] === 'string' ? t['key'] : '';
  const effect = typeof t['effect'] === 'string' ? t['effect'] : '';
  return (k === key || k === '') && (effect === 'NoExecute' || effect === '');
}

export function isPodRequest(attrs: AdmissionAttributes): boolean {
  return attrs.resource.group === '' && attrs.resource.resource === 'pods' && attrs.subresource === '';
}

export function podSpecOf(obj: StoredObject): Obj {
  const s = obj['spec'];
  if (typeof s === 'object' && s !== null && !Array.isArray(s)) return s as Obj;
  const made: Obj = {};
  obj['spec'] = made;
  return made;
}

export function defaultTolerationSeconds(opts: TolerationSecondsOptions): AdmissionPlugin {
  return {
    name: DEFAULT_TOLERATION_SECONDS,
    handles: (attrs) => isPodRequest(attrs) && (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE'),
    admit(_attrs, obj) {
      if (obj === undefined) return;
      const spec = podSpecOf(obj);
      const tolerations = Array.isArray(spec['tolerations']) ? (spec['tolerations'] as unknown[]) : [];
      const list = tolerations.filter((t): t is Obj => typeof t === 'object' && t !== null);
      const add: Obj[] = [];
      for (const [key, seconds] of [[TAINT_NOT_READY, opts.notReadySeconds], [TAINT_UNREACHABLE, opts.unreachableSeconds]] as const) {
        if (!list.some((t) => covers(t, key))) add.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
      }
      if (add.length > 0) spec['tolerations'] = [...tolerations, ...add];
    },
  };
}
