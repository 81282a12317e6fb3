// `why`: walks the owner chain down from the object asked about (Deployment → its ReplicaSets → their Pods →
// the Nodes they are bound to), judges each from its recorded conditions, status, events, admission history
// and loops' records (reconcile subresource), folds pods that fail alike into one, and names the deepest error as the verdict: a Deployment
// that is not available points at its pods' reasons.
import type { KubeObject } from '../client/kube-object.js';
import { eventFindings } from './event-findings.js';
import { historyFindings, lastSpecWrite } from './history-findings.js';
import { judge } from './kind-rules.js';
import { loopFindings } from './loop-findings.js';
import { obj, text } from './object-fields.js';
import type { WhySource } from './why-source.js';
import type { Cause, Finding, ObjectRef, ObjectReport, WhyReport } from './why-types.js';

/** Children looked at per object: bounds what one `why` may cost on a big ReplicaSet. */
const MAX_CHILDREN = 50;

const CHILD_KINDS: Readonly<Record<string, string>> = { Deployment: 'ReplicaSet', ReplicaSet: 'Pod' };

function refOf(kind: string, o: KubeObject): ObjectRef {
  return { kind, namespace: o.metadata?.namespace ?? '', name: o.metadata?.name ?? '' };
}

export function refText(r: ObjectRef): string {
  return `${r.kind} ${r.namespace !== '' ? `${r.namespace}/` : ''}${r.name}`;
}

export class WhyEngine {
  private readonly nodes = new Map<string, Promise<ObjectReport | undefined>>();
  private recordsRead = true;

  constructor(private readonly source: WhySource) {}

  async explain(kind: string, namespace: string, name: string): Promise<WhyReport | undefined> {
    const o = await this.source.get(kind, namespace, name);
    if (!o) return undefined;
    const tree = await this.report(kind, o, 0);
    const causes = causesOf(tree);
    const head = `${refText(tree.ref)} ${tree.converged ? 'is converged' : 'is not converging'} (${tree.state})`;
    let verdict: string;
    if (tree.converged) verdict = `${head}.`;
    else if (causes.length > 0) verdict = `${head}: ${causes.map((c) => `${c.ref.kind === tree.ref.kind && c.ref.name === tree.ref.name ? '' : `${refText(c.ref)}: `}${c.finding.summary}`).join('; ')}`;
    else verdict = `${head}, and nothing recorded says why: no failing condition, warning event or refusal on it or below it`;
    return {
      apiVersion: 'setpoint.io/v1',
      kind: 'WhyReport',
      target: tree.ref,
      converged: tree.converged,
      verdict,
      causes,
      generatedAt: new Date(this.source.now()).toISOString(),
      historyRead: this.source.historyAvailable,
      loopRecordsRead: this.recordsRead,
      tree,
    };
  }

  private async report(kind: string, o: KubeObject, depth: number): Promise<ObjectReport> {
    const ns = o.metadata?.namespace ?? '';
    const name = o.metadata?.name ?? '';
    const leaseRenewTime = kind === 'Node' ? await this.source.nodeLeaseRenewTime(name) : undefined;
    const v = judge(kind, o, { now: this.source.now(), ...(leaseRenewTime !== undefined ? { leaseRenewTime } : {}) });
    const [events, history, records] = await Promise.all([this.source.events(kind, o), this.source.history(kind, ns, name), this.source.loopRecords(kind, ns, name)]);
    if (records === undefined) this.recordsRead = false;
    const findings: Finding[] = [...v.findings];
    const stale = findings.findIndex((f) => f.source === 'stale' && f.evidence.time === undefined);
    const changed = history ? lastSpecWrite(history) : undefined;
    const staleOne = findings[stale];
    if (staleOne && changed !== undefined) findings[stale] = { ...staleOne, summary: `${staleOne.summary} (spec last written ${changed})`, evidence: { ...staleOne.evidence, time: changed } };
    findings.push(...eventFindings(events, findings));
    if (history) findings.push(...historyFindings(history, depth === 0 ? 'error' : 'warning'));
    if (records) findings.push(...loopFindings(records));
    const owner = (o.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
    if (depth === 0 && owner) findings.push({ severity: 'info', source: 'owner', summary: `controlled by ${owner.kind} ${owner.name} (ask why of it for the whole chain)`, evidence: {} });
    const children = depth < 3 ? await this.childrenOf(kind, o, depth) : [];
    // A controller's counts are its own verdict; a pod is also only as good as the node it runs on.
    const converged = v.converged && children.filter((c) => c.ref.kind === 'Node').every((c) => c.converged);
    return { ref: refOf(kind, o), converged, state: v.state, findings, children };
  }

  private async childrenOf(kind: string, o: KubeObject, depth: number): Promise<ObjectReport[]> {
    const out: ObjectReport[] = [];
    const childKind = CHILD_KINDS[kind];
    const uid = o.metadata?.uid;
    if (childKind !== undefined && uid !== undefined) {
      let owned = await this.source.owned(childKind, o.metadata?.namespace ?? '', uid);
      // A Deployment's old ReplicaSets scaled to zero say nothing about today's gap.
      if (childKind === 'ReplicaSet') owned = owned.filter((rs, i, all) => (typeof obj(rs.spec).replicas === 'number' ? (obj(rs.spec).replicas as number) > 0 : true) || all.length === 1);
      const reports = await Promise.all(owned.slice(0, MAX_CHILDREN).map((c) => this.report(childKind, c, depth + 1)));
      out.push(...foldAlike(reports));
      if (owned.length > MAX_CHILDREN) out.push({ ref: { kind: childKind, namespace: o.metadata?.namespace ?? '', name: `(${owned.length - MAX_CHILDREN} more not examined)` }, converged: true, state: '', findings: [], children: [] });
    }
    const nodeName = kind === 'Pod' ? text(obj(o.spec).nodeName) : '';
    if (nodeName !== '') {
      const n = await this.node(nodeName, depth);
      if (n && !n.converged) out.push(n);
    }
    return out;
  }

  /** A node is judged once, however many pods are bound to it. */
  private node(name: string, depth: number): Promise<ObjectReport | undefined> {
    let p = this.nodes.get(name);
    if (!p) {
      p = this.source.get('Node', '', name).then((n) => (n ? this.report('Node', n, depth + 1) : undefined));
      this.nodes.set(name, p);
    }
    return p;
  }
}

/**
 * Siblings whose findings read the same (ten pods, one FitError) become one report listing the others. The
 * per-object defaulting records differ only in time, so they do not keep pods apart; a refusal does.
 */
function foldAlike(reports: readonly ObjectReport[]): ObjectReport[] {
  const groups = new Map<string, ObjectReport[]>();
  for (const r of reports) {
    const key = `${String(r.converged)}|${r.state}|${r.findings.filter((f) => f.source !== 'admission' || f.severity !== 'info').map((f) => f.summary).join('\n')}`;
    const g = groups.get(key);
    if (g) g.push(r);
    else groups.set(key, [r]);
  }
  const out: ObjectReport[] = [];
  for (const g of groups.values()) {
    const [first, ...rest] = g;
    if (!first) continue;
    out.push(rest.length === 0 ? first : { ...first, alike: rest.map((r) => r.ref.name) });
  }
  // Not converged first: that is where the answer is.
  return out.sort((a, b) => Number(a.converged) - Number(b.converged));
}

/** Causes shown in the verdict, at most. */
const MAX_CAUSES = 3;

function collect(r: ObjectReport, severity: Finding['severity'], depth: number, out: { r: ObjectReport; f: Finding; depth: number }[]): void {
  for (const f of r.findings) if (f.severity === severity) out.push({ r, f, depth });
  for (const c of r.children) collect(c, severity, depth + 1, out);
}

/**
 * The causes below the symptoms: a Deployment's Progressing=False is what its ReplicaSet's FailedCreate and
 * its pods' FitErrors look like from above, so findings under the target win over the target's own; errors
 * win over warnings. Deepest first, one per distinct summary.
 */
function causesOf(tree: ObjectReport): Cause[] {
  for (const severity of ['error', 'warning'] as const) {
    const all: { r: ObjectReport; f: Finding; depth: number }[] = [];
    collect(tree, severity, 0, all);
    const below = all.filter((x) => x.depth > 0);
    const chosen = (below.length > 0 ? below : all).sort((a, b) => b.depth - a.depth);
    const seen = new Map<string, Cause>();
    const out: Cause[] = [];
    for (const x of chosen) {
      const alike = x.r.alike?.length ?? 0;
      const same = seen.get(x.f.summary);
      // The same reason on another object (a pod not folded for another finding) counts it as alike.
      if (same) seen.set(x.f.summary, { ...same, alike: same.alike + 1 + alike });
      else if (seen.size < MAX_CAUSES) seen.set(x.f.summary, { ref: x.r.ref, alike, finding: x.f });
    }
    out.push(...seen.values());
    if (out.length > 0) return out;
  }
  return [];
}
