// Decoding bodies into our kinds: the schema registry is complete, real manifests decode without
// strict errors, Kubernetes' own field-validation case gives its exact strict decoding error, type
// errors and syntax errors read as Go's, and objects come back re-serialized the way Go writes them.
import { describe, expect, it } from 'vitest';
import { cannotBeHandledMessage, decodeJSON, decodeValue, strictDecodingMessage } from '../../src/api/decode.js';
import { builtinSchemas } from '../../src/api/schema/registry.js';
import { parseJSON } from '../../src/api/strict-json.js';
import { deployment, otherObjects } from './fixtures.js';

const deploymentGvk = { group: 'apps', version: 'v1', kind: 'Deployment' };
const podGvk = { group: '', version: 'v1', kind: 'Pod' };

function gvkOf(o: Record<string, unknown>): { group: string; version: string; kind: string } {
  const av = String(o.apiVersion);
  const [group, version] = av.includes('/') ? av.split('/') : ['', av];
  return { group: group ?? '', version: version ?? '', kind: String(o.kind) };
}

function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('no error');
}

describe('schema registry', () => {
  it('resolves every reference and knows every kind of issue 26', () => {
    expect(builtinSchemas.danglingReferences()).toEqual([]);
    const kinds = [
      ['', 'v1', 'Namespace'], ['', 'v1', 'Pod'], ['', 'v1', 'Node'], ['', 'v1', 'Event'], ['', 'v1', 'ConfigMap'], ['', 'v1', 'Secret'],
      ['', 'v1', 'ServiceAccount'], ['', 'v1', 'Binding'], ['apps', 'v1', 'Deployment'], ['apps', 'v1', 'ReplicaSet'], ['autoscaling', 'v1', 'Scale'],
      ['coordination.k8s.io', 'v1', 'Lease'], ['events.k8s.io', 'v1', 'Event'], ['scheduling.k8s.io', 'v1', 'PriorityClass'],
      ['admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration'], ['admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration'],
      ['', 'v1', 'Status'], ['meta.k8s.io', 'v1', 'Table'], ['', 'v1', 'PodList'], ['apps', 'v1', 'DeploymentList'],
    ];
    for (const [group, version, kind] of kinds) expect(builtinSchemas.typeNameForKind({ group: group ?? '', version: version ?? '', kind: kind ?? '' }), kind).toBeDefined();
    const container = builtinSchemas.struct({ kind: 'ref', name: 'io.k8s.api.core.v1.Container' });
    expect(container?.fields.ports?.schema).toEqual({ kind: 'list', listType: 'map', mapKeys: ['containerPort', 'protocol'], items: { kind: 'ref', name: 'io.k8s.api.core.v1.ContainerPort' } });
    expect(container?.fields.ports?.patchMergeKey).toBe('containerPort');
    expect(container?.fields.env?.patchStrategy).toBe('merge');
    const spec = builtinSchemas.struct({ kind: 'ref', name: 'io.k8s.api.core.v1.PodSpec' });
    expect(spec?.fields.volumes?.patchStrategy).toBe('merge,retainKeys');
    expect(spec?.fields.tolerations?.schema.kind === 'list' && spec.fields.tolerations.schema.listType).toBe('atomic');
    const meta = builtinSchemas.struct({ kind: 'ref', name: 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' });
    expect(meta?.fields.finalizers?.schema.kind === 'list' && meta.fields.finalizers.schema.listType).toBe('set');
    expect(meta?.fields.ownerReferences?.patchMergeKey).toBe('uid');
  });
});

describe('decoding', () => {
  it('decodes a full Deployment with no strict errors and normalizes it as Go re-serializes it', () => {
    const d = decodeValue(builtinSchemas, builtinSchemas.kindSchema(deploymentGvk) ?? { kind: 'any' }, { value: deployment() }, { reportStrict: true });
    expect(d.strictErrors).toEqual([]);
    const o = d.object as { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec: { template: { metadata: Record<string, unknown>; spec: Record<string, unknown> } }; status: unknown };
    expect(Object.keys(o)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(o.metadata.creationTimestamp).toBeNull();
    expect(o.status).toEqual({});
    const c = (o.spec.template.spec.containers as Record<string, unknown>[])[0] as { resources: { requests: Record<string, string>; limits: Record<string, string> }; ports: unknown[] };
    expect(c.resources.requests.cpu).toBe('250m');
    expect(c.resources.limits.cpu).toBe('1');
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { name: 'metrics', containerPort: 9090 }]);
    const init = (o.spec.template.spec.initContainers as Record<string, unknown>[])[0];
    expect(init?.resources).toEqual({ requests: { cpu: '100m', memory: '64Mi' } });
    expect(o.spec.template.metadata.creationTimestamp).toBeNull();
  });

  it.each(otherObjects.map((o) => [String(o.kind), o] as const))('decodes a %s with no strict errors', (_kind, obj) => {
    const d = decodeJSON(builtinSchemas, gvkOf(obj), JSON.stringify(obj), 'Strict');
    expect(d.strictErrors).toEqual([]);
  });

  it('fills the fields Go always writes, as kubectl sees on an empty object', () => {
    const d = decodeJSON(builtinSchemas, deploymentGvk, '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"}}', 'Strict');
    expect(d.object).toEqual({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x', creationTimestamp: null },
      spec: { selector: null, template: { metadata: { creationTimestamp: null }, spec: { containers: null } }, strategy: {} },
      status: {},
    });
    const pod = decodeJSON(builtinSchemas, podGvk, '{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}', 'Strict');
    expect(pod.object.spec).toEqual({ containers: [{ name: 'c', image: 'i', resources: {} }] });
    expect(decodeJSON(builtinSchemas, podGvk, '{}', 'Ignore', { emitZeroFields: false }).object).toEqual({});
  });

  it("reports Kubernetes' strict decoding errors in document order (its field validation test body)", () => {
    const body = `{
      "apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": { "name": "dupename", "name": "deployment", "labels": {"app": "nginx"}, "unknownMeta": "metaVal" },
      "spec": {
        "unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2", "paused": true, "paused": false,
        "selector": { "matchLabels": { "app": "nginx" } },
        "template": { "metadata": { "labels": { "app": "nginx" } },
          "spec": { "containers": [{ "name": "nginx", "image": "nginx:latest", "unknownNested": "val1", "imagePullPolicy": "Always", "imagePullPolicy": "Never" }] } }
      }
    }`;
    const d = decodeJSON(builtinSchemas, deploymentGvk, body, 'Strict');
    expect(strictDecodingMessage(d.strictErrors)).toBe(
      'strict decoding error: duplicate field "metadata.name", unknown field "metadata.unknownMeta", unknown field "spec.unknown1", unknown field "spec.unknownDupe", duplicate field "spec.paused", unknown field "spec.template.spec.containers[0].unknownNested", duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
    );
    // The last value wins and unknown fields are dropped, as Go's decoder leaves them.
    const spec = d.object.spec as { paused: boolean; template: { spec: { containers: { imagePullPolicy: string }[] } } };
    expect(spec.paused).toBe(false);
    expect(spec.template.spec.containers[0]?.imagePullPolicy).toBe('Never');
    expect('unknown1' in spec).toBe(false);
    expect(decodeJSON(builtinSchemas, deploymentGvk, body, 'Ignore').strictErrors).toEqual([]);
    expect(cannotBeHandledMessage(deploymentGvk, 'x')).toBe('Deployment in version "v1" cannot be handled as a Deployment: x');
  });

  it("gives Go's type errors", () => {
    const pod = (spec: string): string => errorOf(() => decodeJSON(builtinSchemas, podGvk, `{"spec":${spec}}`, 'Strict'));
    expect(pod('"x"')).toBe('json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec');
    expect(pod('{"containers":{}}')).toBe('json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container');
    expect(pod('{"containers":[{"name":"c","ports":[{"containerPort":"80"}]}]}')).toBe(
      'json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    );
    expect(pod('{"containers":[{"name":"c","ports":[{"containerPort":1.5}]}]}')).toBe(
      'json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    );
    expect(pod('{"hostNetwork":"yes"}')).toBe('json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool');
    expect(pod('{"nodeSelector":{"a":1}}')).toBe('json: cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string');
    expect(pod('{"containers":[{"name":"c","resources":{"limits":{"cpu":"1ki"}}}]}')).toBe("unable to parse quantity's suffix");
    expect(pod('{"containers":[{"name":"c","resources":{"limits":{"cpu":"abc"}}}]}')).toBe(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
    expect(pod('{"containers":[{"name":"c","livenessProbe":{"httpGet":{"port":1.5}}}]}')).toBe('json: cannot unmarshal number 1.5 into Go value of type int32');
    const meta = (m: string): string => errorOf(() => decodeJSON(builtinSchemas, podGvk, `{"metadata":${m}}`, 'Strict'));
    expect(meta('{"creationTimestamp":"yesterday"}')).toBe('parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"');
    expect(meta('{"creationTimestamp":"2024-13-01T00:00:00Z"}')).toBe('parsing time "2024-13-01T00:00:00Z": month out of range');
    const secret = errorOf(() => decodeJSON(builtinSchemas, { group: '', version: 'v1', kind: 'Secret' }, '{"data":{"a":"not base64!"}}', 'Strict'));
    expect(secret).toBe('illegal base64 data at input byte 3');
  });

  it('normalizes timestamps to UTC as metav1.Time and MicroTime write them', () => {
    const d = decodeJSON(builtinSchemas, podGvk, '{"metadata":{"creationTimestamp":"2024-05-01T12:30:00.987+02:00"}}', 'Strict');
    expect((d.object.metadata as Record<string, unknown>).creationTimestamp).toBe('2024-05-01T10:30:00Z');
    const lease = decodeJSON(builtinSchemas, { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' }, '{"spec":{"renewTime":"2024-05-01T10:00:00.5Z"}}', 'Strict');
    expect((lease.object.spec as Record<string, unknown>).renewTime).toBe('2024-05-01T10:00:00.500000Z');
  });

  it("gives Go's syntax errors for malformed JSON", () => {
    const syntax = (s: string): string => errorOf(() => parseJSON(s));
    expect(syntax('{"a":1')).toBe('unexpected end of JSON input');
    expect(syntax('{"a" 1}')).toBe("invalid character '1' after object key");
    expect(syntax('{"a":1 "b":2}')).toBe(`invalid character '"' after object key:value pair`);
    expect(syntax('{a:1}')).toBe("invalid character 'a' looking for beginning of object key string");
    expect(syntax('[1,]')).toBe("invalid character ']' looking for beginning of value");
    expect(syntax('[1 2]')).toBe("invalid character '2' after array element");
    expect(syntax('{} x')).toBe("invalid character 'x' after top-level value");
    expect(syntax('tru')).toBe('unexpected end of JSON input');
    expect(syntax('01')).toBe("invalid character '1' after top-level value");
    expect(parseJSON('{"a":"\\u00e9\\n","b":[1,2.5,-3e2,true,null]}').value).toEqual({ a: 'é\n', b: [1, 2.5, -300, true, null] });
  });
});
