// References to named types by their OpenAPI definition names, so that type files can say
// core('Container') or QUANTITY instead of spelling io.k8s.api.core.v1.Container out.

import { field, ref, str } from './schema.js';
import type { RefSchema } from './schema.js';

const group = (prefix: string) => (name: string): RefSchema => ref(`${prefix}.${name}`);

export const meta = group('io.k8s.apimachinery.pkg.apis.meta.v1');
export const core = group('io.k8s.api.core.v1');
export const apps = group('io.k8s.api.apps.v1');
export const autoscaling = group('io.k8s.api.autoscaling.v1');
export const coordination = group('io.k8s.api.coordination.v1');
export const events = group('io.k8s.api.events.v1');
export const scheduling = group('io.k8s.api.scheduling.v1');
export const admission = group('io.k8s.api.admissionregistration.v1');

export const QUANTITY = ref('io.k8s.apimachinery.pkg.api.resource.Quantity');
export const INT_OR_STRING = ref('io.k8s.apimachinery.pkg.util.intstr.IntOrString');
export const TIME = ref('io.k8s.apimachinery.pkg.apis.meta.v1.Time');
export const MICRO_TIME = ref('io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime');
export const RAW_EXTENSION = ref('io.k8s.apimachinery.pkg.runtime.RawExtension');
export const FIELDS_V1 = ref('io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1');

/** The TypeMeta fields every kind inlines at its top level. */
export const typeMetaFields = {
  apiVersion: field(str, 'The versioned schema of this representation, group/version.'),
  kind: field(str, 'The REST resource kind of this object, in CamelCase (read-only on the server).'),
};
