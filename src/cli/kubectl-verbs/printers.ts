// kubectl's output formats: server Tables laid out as its tabwriter does (padding 3, minimum width 6, the
// last column unpadded), `-o json` (4-space indent) and `-o yaml` with keys in Go's sorted-map order, and
// `-o name`.
import { stringify } from 'yaml';
import type { KubeObject } from '../../client/kube-object.js';
import { CliError } from './cli-error.js';
import { TABLE_TABS, tabulate } from './tab-writer.js';

export type OutputFormat = 'table' | 'wide' | 'yaml' | 'json' | 'name';

export function parseOutput(o: string | undefined): OutputFormat {
  if (o === undefined || o === '') return 'table';
  if (o === 'wide' || o === 'yaml' || o === 'json' || o === 'name') return o;
  throw new CliError('CLI_USAGE', `unable to match a printer suitable for the output format "${o}", allowed formats are: json,name,wide,yaml`);
}

export interface TableColumnDef {
  readonly name: string;
  readonly priority?: number;
}

export interface TableRowDoc {
  readonly cells: readonly unknown[];
  readonly object?: KubeObject;
}

export interface TableDoc {
  readonly kind?: string;
  readonly columnDefinitions?: readonly TableColumnDef[];
  readonly rows?: readonly TableRowDoc[];
  readonly metadata?: { resourceVersion?: string };
}

/** Rows of cells aligned as kubectl get aligns them. */
export function alignColumns(rows: readonly (readonly string[])[], remembered?: number[]): string[] {
  return rows.length === 0 ? [] : tabulate(rows.map((r) => r.join('\t')).join('\n'), TABLE_TABS, remembered);
}

export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '<none>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

export interface TableLayout {
  readonly wide: boolean;
  /** -A: a NAMESPACE column first, from each row's object. */
  readonly withNamespace: boolean;
  /** Several kinds in one get: names as `kind.group/name`. */
  readonly namePrefix?: string;
}

/** The visible column indexes and the header line's cells. */
function visible(t: TableDoc, l: TableLayout): { idx: number[]; header: string[] } {
  const idx: number[] = [];
  const header: string[] = l.withNamespace ? ['NAMESPACE'] : [];
  (t.columnDefinitions ?? []).forEach((c, i) => {
    if ((c.priority ?? 0) === 0 || l.wide) {
      idx.push(i);
      header.push(c.name.toUpperCase());
    }
  });
  return { idx, header };
}

export function tableRows(t: TableDoc, l: TableLayout): string[][] {
  const { idx } = visible(t, l);
  return (t.rows ?? []).map((r) => {
    const cells = idx.map((i) => cellText(r.cells[i]));
    if (l.namePrefix !== undefined && cells.length > 0) cells[0] = `${l.namePrefix}/${cells[0] ?? ''}`;
    return l.withNamespace ? [r.object?.metadata?.namespace ?? '', ...cells] : cells;
  });
}

export function tableHeader(t: TableDoc, l: TableLayout): string[] {
  return visible(t, l).header;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v !== 'object' || v === null) return v;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) out[k] = sortKeys(o[k]);
  return out;
}

/** kubectl hides managedFields unless --show-managed-fields: so do we. */
function withoutManagedFields(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  const o = v as KubeObject;
  if (Array.isArray(o.items)) return { ...o, items: (o.items as unknown[]).map(withoutManagedFields) };
  if (o.metadata?.managedFields === undefined) return o;
  const { managedFields: _hidden, ...metadata } = o.metadata;
  return { ...o, metadata };
}

export function toJson(v: unknown): string {
  return JSON.stringify(sortKeys(withoutManagedFields(v)), null, 4);
}

export function toYaml(v: unknown): string {
  return stringify(sortKeys(withoutManagedFields(v)), { lineWidth: 0, indentSeq: false, aliasDuplicateObjects: false });
}

/** A list as kubectl prints several objects in -o json|yaml. */
export function asList(items: readonly KubeObject[]): KubeObject {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}
