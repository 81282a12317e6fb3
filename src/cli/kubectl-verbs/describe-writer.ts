// What kubectl's describers share: a prefix writer (levels of two spaces) whose text goes through Go's
// tabwriter (padding 2), and the sections every kind prints the same way — labels and annotations one per
// line, RFC 1123 times, conditions, the pod template's containers, and the object's events at the bottom.
import type { KubeObject } from '../../client/kube-object.js';
import { DESCRIBE_TABS, tabulate } from './tab-writer.js';
import { eventSource, sortEvents, type EventObject } from '../../client/event-facts.js';
import { eventAge } from './event-age.js';

export type Obj = Record<string, unknown>;

export const asObj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
export const asArr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asObj) : []);
export const str = (v: unknown, dflt = ''): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : dflt);
export const num = (v: unknown, dflt = 0): number => (typeof v === 'number' ? v : dflt);

export class DescribeWriter {
  private text = '';

  line(level: number, s: string, extra = ''): void {
    this.text += `${'  '.repeat(level)}${extra}${s}\n`;
  }

  render(): string {
    return `${tabulate(this.text, DESCRIBE_TABS).join('\n')}\n`;
  }
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Go's time.RFC1123Z in UTC, as kubectl describe prints times: `Wed, 02 Dec 2026 15:12:10 +0000`. */
export function rfc1123(iso: unknown): string {
  const t = typeof iso === 'string' ? new Date(iso) : undefined;
  if (!t || Number.isNaN(t.getTime())) return '<unset>';
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${DAYS[t.getUTCDay()] ?? ''}, ${p(t.getUTCDate())} ${MONTHS[t.getUTCMonth()] ?? ''} ${t.getUTCFullYear()} ${p(t.getUTCHours())}:${p(t.getUTCMinutes())}:${p(t.getUTCSeconds())} +0000`;
}

/** `Labels:\tk=v` then `\tk2=v2` (sorted), or `<none>`; annotations as `k: v`. */
export function multiline(w: DescribeWriter, level: number, title: string, m: unknown, sep: '=' | ': ', skip: ReadonlySet<string> = new Set()): void {
  const entries = Object.entries(asObj(m))
    .filter(([k]) => !skip.has(k))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return w.line(level, `${title}:\t<none>`);
  entries.forEach(([k, v], i) => w.line(level, `${i === 0 ? `${title}:` : ''}\t${k}${sep}${str(v)}`));
}

export const HIDDEN_ANNOTATIONS: ReadonlySet<string> = new Set(['kubectl.kubernetes.io/last-applied-configuration']);

export function labelsAndAnnotations(w: DescribeWriter, level: number, meta: Obj): void {
  multiline(w, level, 'Labels', meta.labels, '=');
  multiline(w, level, 'Annotations', meta.annotations, ': ', HIDDEN_ANNOTATIONS);
}

export function controlledBy(w: DescribeWriter, meta: Obj): void {
  const c = asArr(meta.ownerReferences).find((r) => r.controller === true);
  if (c) w.line(0, `Controlled By:\t${str(c.kind)}/${str(c.name)}`);
}

/** kubectl's condition table; `columns` picks the fields after Type and Status. */
export function conditions(w: DescribeWriter, level: number, conds: unknown, columns: readonly ('Reason' | 'Message' | 'LastHeartbeatTime' | 'LastTransitionTime')[], afterType = ''): void {
  const list = asArr(conds);
  if (list.length === 0) return;
  w.line(level, 'Conditions:');
  w.line(level + 1, ['Type', 'Status', ...columns].join('\t'));
  w.line(level + 1, ['----', '------', ...columns.map((c) => '-'.repeat(c.length))].join('\t'));
  for (const c of list) {
    const cells = columns.map((k) => {
      const v = c[k.charAt(0).toLowerCase() + k.slice(1)];
      return k.endsWith('Time') ? rfc1123(v) : str(v);
    });
    w.line(level + 1, [`${str(c.type)}${afterType}`, str(c.status), ...cells].join('\t'));
  }
}

function ports(c: Obj): { port: string; host: string } {
  const ps = asArr(c.ports);
  if (ps.length === 0) return { port: '<none>', host: '<none>' };
  const proto = (p: Obj): string => str(p.protocol, 'TCP');
  return {
    port: ps.map((p) => `${num(p.containerPort)}/${proto(p)}`).join(', '),
    host: ps.map((p) => `${num(p.hostPort)}/${proto(p)}`).join(', '),
  };
}

function resourceList(w: DescribeWriter, level: number, title: string, r: unknown): void {
  const e = Object.entries(asObj(r)).sort(([a], [b]) => (a < b ? -1 : 1));
  if (e.length === 0) return;
  w.line(level, `${title}:`);
  for (const [k, v] of e) w.line(level + 1, `${k}:\t${str(v)}`);
}

function state(w: DescribeWriter, level: number, title: string, s: Obj): void {
  const [name, d] = Object.entries(s)[0] ?? [];
  if (name === undefined) return w.line(level, `${title}:\tWaiting`);
  const det = asObj(d);
  w.line(level, `${title}:\t${name.charAt(0).toUpperCase()}${name.slice(1)}`);
  if (det.reason !== undefined) w.line(level + 1, `Reason:\t${str(det.reason)}`);
  if (det.message !== undefined) w.line(level + 1, `Message:\t${str(det.message)}`);
  if (det.exitCode !== undefined) w.line(level + 1, `Exit Code:\t${str(det.exitCode)}`);
  if (det.startedAt !== undefined) w.line(level + 1, `Started:\t${rfc1123(det.startedAt)}`);
  if (det.finishedAt !== undefined) w.line(level + 1, `Finished:\t${rfc1123(det.finishedAt)}`);
}

/**
 * The containers of a pod spec; a container with a status (a pod's) also shows ids, state, readiness and
 * restarts. kubectl indents a template's container names one space deeper than a pod's; fields sit at 4.
 */
export function containers(w: DescribeWriter, level: number, title: string, list: unknown, statuses?: unknown): void {
  const cs = asArr(list);
  if (cs.length === 0) return;
  w.line(level, `${title}:`);
  const st = statuses === undefined ? undefined : asArr(statuses);
  for (const c of cs) {
    const s = st?.find((x) => x.name === c.name);
    w.line(1, `${str(c.name)}:`, level > 0 ? ' ' : '');
    const l = 2;
    if (s !== undefined) w.line(l, `Container ID:\t${str(s.containerID)}`);
    w.line(l, `Image:\t${str(c.image)}`);
    if (s !== undefined) w.line(l, `Image ID:\t${str(s.imageID)}`);
    const p = ports(c);
    w.line(l, `Port:\t${p.port}`);
    w.line(l, `Host Port:\t${p.host}`);
    const cmd = Array.isArray(c.command) ? (c.command as unknown[]) : [];
    if (cmd.length > 0) {
      w.line(l, 'Command:');
      for (const a of cmd) w.line(l + 1, str(a));
    }
    const args = Array.isArray(c.args) ? (c.args as unknown[]) : [];
    if (args.length > 0) {
      w.line(l, 'Args:');
      for (const a of args) w.line(l + 1, str(a));
    }
    if (s !== undefined) {
      state(w, l, 'State', asObj(s.state));
      if (s.lastState !== undefined && Object.keys(asObj(s.lastState)).length > 0) state(w, l, 'Last State', asObj(s.lastState));
      w.line(l, `Ready:\t${s.ready === true ? 'True' : 'False'}`);
      w.line(l, `Restart Count:\t${num(s.restartCount)}`);
    }
    resourceList(w, l, 'Limits', asObj(c.resources).limits);
    resourceList(w, l, 'Requests', asObj(c.resources).requests);
    const env = asArr(c.env);
    if (env.length === 0) w.line(l, 'Environment:\t<none>');
    else {
      w.line(l, 'Environment:');
      for (const e of env) w.line(l + 1, `${str(e.name)}:\t${e.value !== undefined ? str(e.value) : '(from a reference)'}`);
    }
    const mounts = asArr(c.volumeMounts);
    if (mounts.length === 0) w.line(l, 'Mounts:\t<none>');
    else {
      w.line(l, 'Mounts:');
      for (const m of mounts) w.line(l + 1, `${str(m.mountPath)} from ${str(m.name)} (${m.readOnly === true ? 'ro' : 'rw'})`);
    }
  }
}

export function volumes(w: DescribeWriter, level: number, vols: unknown): void {
  const vs = asArr(vols);
  if (vs.length === 0) return w.line(level, 'Volumes:\t<none>');
  w.line(level, 'Volumes:');
  for (const v of vs) {
    const [type] = Object.keys(v).filter((k) => k !== 'name');
    w.line(level + 1, `${str(v.name)}:`);
    w.line(level + 2, `Type:\t${type ?? '<unknown>'}`);
  }
}

export function tolerationLines(w: DescribeWriter, level: number, tols: unknown, title = 'Tolerations'): void {
  const ts = asArr(tols);
  if (ts.length === 0) return w.line(level, `${title}:\t<none>`);
  ts.forEach((t, i) => {
    let s = str(t.key);
    if (t.value !== undefined && t.value !== '') s += `=${str(t.value)}`;
    if (t.effect !== undefined && t.effect !== '') s += `:${str(t.effect)}`;
    if (t.operator === 'Exists' && (t.value === undefined || t.value === '')) s += ' op=Exists';
    if (typeof t.tolerationSeconds === 'number') s += ` for ${t.tolerationSeconds}s`;
    w.line(level, `${i === 0 ? `${title}:` : ''}\t${s}`);
  });
}

export function nodeSelector(w: DescribeWriter, level: number, sel: unknown): void {
  const e = Object.entries(asObj(sel)).sort(([a], [b]) => (a < b ? -1 : 1));
  w.line(level, `Node-Selectors:\t${e.length === 0 ? '<none>' : e.map(([k, v]) => `${k}=${str(v)}`).join(',')}`);
}

/** A pod template as deployments and replica sets show it. */
export function podTemplate(w: DescribeWriter, template: unknown): void {
  const t = asObj(template);
  const meta = asObj(t.metadata);
  const spec = asObj(t.spec);
  w.line(0, 'Pod Template:');
  multiline(w, 1, 'Labels', meta.labels, '=');
  if (Object.keys(asObj(meta.annotations)).length > 0) multiline(w, 1, 'Annotations', meta.annotations, ': ');
  if (str(spec.serviceAccountName) !== '') w.line(1, `Service Account:\t${str(spec.serviceAccountName)}`);
  containers(w, 1, 'Init Containers', spec.initContainers);
  containers(w, 1, 'Containers', spec.containers);
  volumes(w, 1, spec.volumes);
  nodeSelector(w, 1, spec.nodeSelector);
  tolerationLines(w, 1, spec.tolerations);
}

/** kubectl's Events section: `<none>`, or a table oldest first. */
export function eventsSection(w: DescribeWriter, events: readonly KubeObject[], now: number): void {
  if (events.length === 0) return w.line(0, 'Events:\t<none>');
  w.line(0, 'Events:');
  w.line(1, 'Type\tReason\tAge\tFrom\tMessage');
  w.line(1, '----\t------\t----\t----\t-------');
  for (const e of sortEvents(events as EventObject[])) w.line(1, `${e.type ?? ''}\t${e.reason ?? ''}\t${eventAge(e, now)}\t${eventSource(e)}\t${(e.message ?? '').trim()}`);
}
