// bench:apimachinery — CPU µs per operation of the API machinery the API server runs on each request, on a
// Deployment of realistic size (three containers with probes, env, resources, volumes, affinity):
// strict decoding, the three patch types, server-side apply (first apply, re-apply, conflicting apply
// forced) and the field manager's bookkeeping for an update, plus selectors and quantities.
import { decodeJSON } from '../src/api/decode.js';
import { parseSelector } from '../src/api/labels-selector.js';
import { applyJSONPatch } from '../src/api/patch/json-patch.js';
import { applyMergePatch } from '../src/api/patch/merge-patch.js';
import { applyStrategicMergePatch } from '../src/api/patch/strategic-merge-patch.js';
import { Quantity } from '../src/api/quantity.js';
import { builtinSchemas } from '../src/api/schema/registry.js';
import type { Schema } from '../src/api/schema/schema.js';
import { FieldManager } from '../src/api/ssa/field-manager.js';

type Obj = Record<string, unknown>;
const gvk = { group: 'apps', version: 'v1', kind: 'Deployment' };
const schema = builtinSchemas.kindSchema(gvk) as Schema;
const MIN_MS = Number(process.env.BENCH_MS ?? 1_000);

function container(name: string, port: number): Obj {
  return {
    name, image: `example/${name}:1.2.3`, imagePullPolicy: 'IfNotPresent', args: ['--port', String(port), '--log-level=info'],
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }, { name: 'metrics', containerPort: port + 1000, protocol: 'TCP' }],
    env: [{ name: 'MODE', value: 'prod' }, { name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }, { name: 'PW', valueFrom: { secretKeyRef: { name: 'db', key: 'pw' } } }],
    resources: { requests: { cpu: '250m', memory: '128Mi' }, limits: { cpu: '1', memory: '256Mi' } },
    livenessProbe: { httpGet: { path: '/healthz', port, scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    readinessProbe: { tcpSocket: { port }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    volumeMounts: [{ name: 'config', mountPath: `/etc/${name}`, readOnly: true }, { name: 'cache', mountPath: '/cache' }],
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
    terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
  };
}

function deployment(image = 'example/web:1.2.3', replicas = 3): Obj {
  const web = { ...container('web', 8080), image };
  return {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web', tier: 'frontend' }, annotations: { owner: 'team-a' } },
    spec: {
      replicas, revisionHistoryLimit: 10, progressDeadlineSeconds: 600, selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'web', tier: 'frontend' } },
        spec: {
          containers: [web, container('sidecar', 9000), container('agent', 7000)],
          volumes: [{ name: 'config', configMap: { name: 'web', defaultMode: 420 } }, { name: 'cache', emptyDir: {} }],
          affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } } }] } },
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }],
          restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', terminationGracePeriodSeconds: 30, securityContext: { runAsNonRoot: true },
        },
      },
    },
  };
}

// CPU time (user + system of this process) rather than wall time, so that a busy machine slows the
// figures less; the loop runs until MIN_MS of CPU time has been spent.
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function measure(name: string, fn: () => unknown): { name: string; ops: number; us: number } {
  for (let i = 0; i < 200; i++) fn();
  let ops = 0;
  const t0 = cpuMs();
  let ms = 0;
  while (ms < MIN_MS) {
    for (let i = 0; i < 50; i++) fn();
    ops += 50;
    ms = cpuMs() - t0;
  }
  return { name, ops, us: (ms * 1000) / ops };
}

const body = JSON.stringify(deployment());
const decoded = decodeJSON(builtinSchemas, gvk, body, 'Strict').object;
const smp = { spec: { replicas: 5, template: { spec: { '$setElementOrder/containers': [{ name: 'web' }, { name: 'sidecar' }, { name: 'agent' }], containers: [{ name: 'web', image: 'example/web:1.2.4' }] } } } };
const fm = new FieldManager({ registry: builtinSchemas, gvk, resetFields: [['status']] });
const created = fm.update(undefined, decoded, 'kubectl-client-side-apply');
const live = { ...created, metadata: { ...(created.metadata as Obj), uid: 'u1' } };
const applied = fm.apply(live, deployment('example/web:1.2.4'), 'kubectl', true);
const scaled = { ...applied, spec: { ...(applied.spec as Obj), replicas: 7 } };
const selector = parseSelector('app=web,tier in (frontend,backend),!canary');
const labels = { app: 'web', tier: 'frontend', release: 'stable' };

const results = [
  measure('decode JSON body (Strict)', () => decodeJSON(builtinSchemas, gvk, body, 'Strict')),
  measure('JSON.parse of the body (reference)', () => JSON.parse(body)),
  measure('merge patch (replicas)', () => applyMergePatch(decoded, { spec: { replicas: 5 } })),
  measure('JSON patch (replace image)', () => applyJSONPatch(decoded, [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'x' }])),
  measure("strategic merge patch (kubectl apply's)", () => applyStrategicMergePatch(builtinSchemas, schema, decoded, smp)),
  measure('field manager: create (Update)', () => fm.update(undefined, decoded, 'kubectl-create')),
  measure('field manager: update (replicas)', () => fm.update(applied, scaled, 'hpa')),
  measure('server-side apply: re-apply, image change', () => fm.apply(applied, deployment('example/web:1.2.5'), 'kubectl', false)),
  measure('server-side apply: no-op', () => fm.apply(applied, deployment('example/web:1.2.4'), 'kubectl', false)),
  measure('server-side apply: forced over an update', () => fm.apply(fm.update(applied, scaled, 'hpa'), deployment('example/web:1.2.4', 3), 'kubectl', true)),
  measure('label selector parse', () => parseSelector('app=web,tier in (frontend,backend),!canary')),
  measure('label selector match', () => selector.matches(labels)),
  measure('quantity parse + canonical', () => Quantity.parse('1.5Gi').canonical()),
];

console.log(`Deployment of ${body.length} bytes (3 containers); node ${process.version}; ${MIN_MS} ms of CPU time per row`);
const w = Math.max(...results.map((r) => r.name.length));
console.log(`${'operation'.padEnd(w)}  ${'CPU µs/op'.padStart(9)}  ${'ops'.padStart(8)}`);
for (const r of results) console.log(`${r.name.padEnd(w)}  ${r.us.toFixed(r.us < 10 ? 2 : 1).padStart(9)}  ${String(r.ops).padStart(8)}`);
