// Reading untyped API objects safely: `why` works on whatever JSON the server returns, so every field is
// read through these, never cast.
export type Obj = Record<string, unknown>;

export const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
export const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
export const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');
export const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly lastUpdateTime: string;
  readonly lastHeartbeatTime: string;
}

export function conditionsOf(o: unknown): Condition[] {
  return arr(obj(obj(o).status).conditions).map((c) => ({
    type: text(c.type),
    status: text(c.status),
    reason: text(c.reason),
    message: text(c.message),
    lastTransitionTime: text(c.lastTransitionTime),
    lastUpdateTime: text(c.lastUpdateTime),
    lastHeartbeatTime: text(c.lastHeartbeatTime),
  }));
}

export function condition(o: unknown, type: string): Condition | undefined {
  return conditionsOf(o).find((c) => c.type === type);
}

/** `Type=Status Reason: message` as a condition reads in one line. */
export function conditionLine(c: Condition): string {
  return `${c.type}=${c.status}${c.reason !== '' ? ` ${c.reason}` : ''}${c.message !== '' ? `: ${c.message}` : ''}`;
}
