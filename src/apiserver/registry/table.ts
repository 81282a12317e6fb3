// Server-side Tables (meta.k8s.io/v1 Table), what `kubectl get` prints: each kind names its columns and
// how a row's cells come from an object; the store renders lists, single objects and watch events with them.
import type { StoredObject } from '../storage/interface.js';

export interface TableColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly format?: string;
  readonly description: string;
  /** 0 shows always, 1 and more only with -o wide. */
  readonly priority: number;
  readonly cell: (obj: StoredObject, now: number) => unknown;
}

const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
  cell: (o) => o.metadata.name ?? '',
};

/** Kubernetes' translateTimestampSince: the largest two units that matter (5m10s, 3h, 2d4h). */
export function humanAge(fromIso: unknown, now: number): string {
  if (typeof fromIso !== 'string') return '<unknown>';
  const t = Date.parse(fromIso);
  if (Number.isNaN(t)) return '<unknown>';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 365 * 2) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
  cell: (o, now) => humanAge(o.metadata['creationTimestamp'], now),
};

/** The columns of kinds that name none: Name and Age, as Kubernetes' default table convertor. */
export const defaultColumns: readonly TableColumn[] = [nameColumn, ageColumn];

export function withName(cols: readonly TableColumn[]): readonly TableColumn[] {
  return [nameColumn, ...cols];
}

function partialMeta(o: StoredObject): Record<string, unknown> {
  const m = o.metadata;
  return {
    name: m.name,
    ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
    ...(m.uid !== undefined ? { uid: m.uid } : {}),
    ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
    ...(m['creationTimestamp'] !== undefined ? { creationTimestamp: m['creationTimestamp'] } : {}),
    ...(m['labels'] !== undefined ? { labels: m['labels'] } : {}),
    ...(m['annotations'] !== undefined ? { annotations: m['annotations'] } : {}),
  };
}

export interface TableOptions {
  /** includeObject=None|Metadata|Object; kubectl asks for Object. */
  readonly includeObject: 'None' | 'Metadata' | 'Object';
  readonly noHeaders?: boolean;
}

export function renderTable(
  cols: readonly TableColumn[],
  objs: readonly StoredObject[],
  listMeta: Record<string, unknown>,
  opts: TableOptions,
  now = Date.now(),
): Record<string, unknown> {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    ...(opts.noHeaders
      ? {}
      : {
          columnDefinitions: cols.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority })),
        }),
    rows: objs.map((o) => ({
      cells: cols.map((c) => c.cell(o, now)),
      ...(opts.includeObject === 'None'
        ? {}
        : {
            object:
              opts.includeObject === 'Metadata'
                ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: partialMeta(o) }
                : o,
          }),
    })),
  };
}
