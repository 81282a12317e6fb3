// admissionregistration.k8s.io/v1 Mutating- and ValidatingWebhookConfiguration: webhooks, their
// rules, client configuration and match conditions.
// Field names, types, list types, merge keys and defaults are Kubernetes' (k8s.io/api v0.32); the
// descriptions are short summaries of our own.

import { atomicList, bytes, enumOf, field, int32, mapList, str, struct, typeTable } from './schema.js';
import type { TypeTable } from './schema.js';
import { typeMetaFields, admission, meta } from './type-refs.js';

export const admissionregistrationV1Types: TypeTable = typeTable(
  struct(
    'io.k8s.api.admissionregistration.v1.ServiceReference',
    'A service that serves a webhook.',
    {
      namespace: field(str, 'The service\'s namespace.', { required: true, emitted: true }),
      name: field(str, 'The service\'s name.', { required: true, emitted: true }),
      path: field(str, 'The URL path requests are sent to.'),
      port: field(int32, 'The service port. Defaults to 443.'),
    },
  ),
  struct(
    'io.k8s.api.admissionregistration.v1.WebhookClientConfig',
    'How to reach a webhook.',
    {
      url: field(str, 'The webhook\'s URL, https://host[:port]/path.'),
      service: field(admission('ServiceReference'), 'The in-cluster service serving the webhook.'),
      caBundle: field(bytes, 'The PEM CA bundle that signs the webhook\'s certificate.'),
    },
  ),
  struct(
    'io.k8s.api.admissionregistration.v1.RuleWithOperations',
    'The operations and resources a webhook applies to.',
    {
      operations: field(atomicList(enumOf('*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE')), 'CREATE, UPDATE, DELETE, CONNECT or *.'),
      apiGroups: field(atomicList(str), 'API groups; * for all.'),
      apiVersions: field(atomicList(str), 'API versions; * for all.'),
      resources: field(atomicList(str), 'Resources and subresources, such as pods or pods/status; * for all.'),
      scope: field(enumOf('*', 'Cluster', 'Namespaced'), 'Cluster, Namespaced or *. Defaults to *.'),
    },
  ),
  struct(
    'io.k8s.api.admissionregistration.v1.MatchCondition',
    'A CEL condition a request must meet to be sent to a webhook.',
    {
      name: field(str, 'The condition\'s name.', { required: true, emitted: true }),
      expression: field(str, 'The CEL expression; it must evaluate to a bool.', { required: true, emitted: true }),
    },
  ),
  struct(
    'io.k8s.api.admissionregistration.v1.MutatingWebhook',
    'A webhook that may change objects before they are stored.',
    {
      name: field(str, 'The webhook\'s fully qualified name.', { required: true, emitted: true }),
      clientConfig: field(admission('WebhookClientConfig'), 'How to reach the webhook.', { required: true, emitted: true }),
      rules: field(atomicList(admission('RuleWithOperations')), 'The operations and resources the webhook applies to.'),
      failurePolicy: field(enumOf('Fail', 'Ignore'), 'Ignore or Fail, for when the webhook cannot be called. Defaults to Fail.'),
      matchPolicy: field(enumOf('Equivalent', 'Exact'), 'Exact or Equivalent. Defaults to Equivalent.'),
      namespaceSelector: field(meta('LabelSelector'), 'The namespaces whose objects are sent to the webhook.'),
      objectSelector: field(meta('LabelSelector'), 'The objects sent to the webhook, by label.'),
      sideEffects: field(enumOf('None', 'NoneOnDryRun', 'Some', 'Unknown'), 'None, NoneOnDryRun, Some or Unknown.', { required: true, emitted: true, pointer: true }),
      timeoutSeconds: field(int32, 'Seconds before the call times out, 1 to 30. Defaults to 10.'),
      admissionReviewVersions: field(atomicList(str), 'AdmissionReview versions the webhook accepts, in order of preference.', { required: true, emitted: true }),
      reinvocationPolicy: field(enumOf('IfNeeded', 'Never'), 'Never or IfNeeded. Defaults to Never.'),
      matchConditions: field(mapList(admission('MatchCondition'), 'name'), 'CEL conditions a request must meet to be sent.', { patch: 'merge', mergeKey: 'name' }),
    },
  ),
  struct(
    'io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration',
    'Mutating admission webhooks.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      webhooks: field(mapList(admission('MutatingWebhook'), 'name'), 'The webhooks.', { patch: 'merge', mergeKey: 'name' }),
    },
    { gvk: [{ group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingWebhookConfiguration' }] },
  ),
  struct(
    'io.k8s.api.admissionregistration.v1.ValidatingWebhook',
    'A webhook that may reject objects before they are stored.',
    {
      name: field(str, 'The webhook\'s fully qualified name.', { required: true, emitted: true }),
      clientConfig: field(admission('WebhookClientConfig'), 'How to reach the webhook.', { required: true, emitted: true }),
      rules: field(atomicList(admission('RuleWithOperations')), 'The operations and resources the webhook applies to.'),
      failurePolicy: field(enumOf('Fail', 'Ignore'), 'Ignore or Fail, for when the webhook cannot be called. Defaults to Fail.'),
      matchPolicy: field(enumOf('Equivalent', 'Exact'), 'Exact or Equivalent. Defaults to Equivalent.'),
      namespaceSelector: field(meta('LabelSelector'), 'The namespaces whose objects are sent to the webhook.'),
      objectSelector: field(meta('LabelSelector'), 'The objects sent to the webhook, by label.'),
      sideEffects: field(enumOf('None', 'NoneOnDryRun', 'Some', 'Unknown'), 'None, NoneOnDryRun, Some or Unknown.', { required: true, emitted: true, pointer: true }),
      timeoutSeconds: field(int32, 'Seconds before the call times out, 1 to 30. Defaults to 10.'),
      admissionReviewVersions: field(atomicList(str), 'AdmissionReview versions the webhook accepts, in order of preference.', { required: true, emitted: true }),
      matchConditions: field(mapList(admission('MatchCondition'), 'name'), 'CEL conditions a request must meet to be sent.', { patch: 'merge', mergeKey: 'name' }),
    },
  ),
  struct(
    'io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration',
    'Validating admission webhooks.',
    {
      ...typeMetaFields,
      metadata: field(meta('ObjectMeta'), 'Standard object metadata.', { emitted: true }),
      webhooks: field(mapList(admission('ValidatingWebhook'), 'name'), 'The webhooks.', { patch: 'merge', mergeKey: 'name' }),
    },
    { gvk: [{ group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingWebhookConfiguration' }] },
  ),
);
