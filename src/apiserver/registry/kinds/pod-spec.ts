// A PodSpec's defaults and validation, shared by Pods and the pod templates of Deployments and ReplicaSets
// (Kubernetes' SetDefaults_PodSpec, SetDefaults_Container and ValidatePodSpec, the parts our kinds use).
import { fieldError, type FieldError } from '../../../api/field-errors.js';
import type { FieldPath } from '../../../api/field-path.js';
import { isDNS1123Label } from '../../../api/name-validation.js';
import { arr, child, rec, setDefault, str, type Obj } from './common.js';

/** Kubernetes' rule: `:latest` or no tag pulls Always, anything else IfNotPresent (digests count as tags). */
export function defaultPullPolicy(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  const tag = colon < 0 ? '' : last.slice(colon + 1);
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Obj): void {
  setDefault(c, 'imagePullPolicy', defaultPullPolicy(str(c['image'])));
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  child(c, 'resources');
  for (const p of arr(c['ports'])) setDefault(p, 'protocol', 'TCP');
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const pr = c[probe];
    if (pr === undefined || pr === null) continue;
    const p = rec(pr);
    setDefault(p, 'timeoutSeconds', 1);
    setDefault(p, 'periodSeconds', 10);
    setDefault(p, 'successThreshold', 1);
    setDefault(p, 'failureThreshold', 3);
  }
}

export function defaultPodSpec(spec: Obj): void {
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'schedulerName', 'default-scheduler');
  if (spec['securityContext'] === undefined || spec['securityContext'] === null) spec['securityContext'] = {};
  if (spec['enableServiceLinks'] === undefined || spec['enableServiceLinks'] === null) spec['enableServiceLinks'] = true;
  for (const c of arr(spec['containers'])) defaultContainer(c);
  for (const c of arr(spec['initContainers'])) defaultContainer(c);
}

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];

function validateContainers(list: Obj[], path: FieldPath, seen: Set<string>, required: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (required && list.length === 0) errs.push(fieldError.required(path));
  list.forEach((c, i) => {
    const p = path.index(i);
    const name = str(c['name']);
    if (name === '') errs.push(fieldError.required(p.child('name')));
    else {
      for (const m of isDNS1123Label(name)) errs.push(fieldError.invalid(p.child('name'), name, m));
      if (seen.has(name)) errs.push(fieldError.duplicate(p.child('name'), name));
      seen.add(name);
    }
    if (str(c['image']).trim() === '') errs.push(fieldError.required(p.child('image')));
    const pull = c['imagePullPolicy'];
    if (typeof pull === 'string' && !PULL_POLICIES.includes(pull)) errs.push(fieldError.notSupported(p.child('imagePullPolicy'), pull, PULL_POLICIES));
  });
  return errs;
}

export function validatePodSpec(spec: Obj, path: FieldPath): FieldError[] {
  const seen = new Set<string>();
  const errs = [
    ...validateContainers(arr(spec['initContainers']), path.child('initContainers'), seen, false),
    ...validateContainers(arr(spec['containers']), path.child('containers'), seen, true),
  ];
  const rp = spec['restartPolicy'];
  if (typeof rp === 'string' && !RESTART_POLICIES.includes(rp)) errs.push(fieldError.notSupported(path.child('restartPolicy'), rp, RESTART_POLICIES));
  const dp = spec['dnsPolicy'];
  if (typeof dp === 'string' && !DNS_POLICIES.includes(dp)) errs.push(fieldError.notSupported(path.child('dnsPolicy'), dp, DNS_POLICIES));
  const grace = spec['terminationGracePeriodSeconds'];
  if (typeof grace === 'number' && grace < 0) errs.push(fieldError.invalid(path.child('terminationGracePeriodSeconds'), grace, 'must be greater than or equal to 0'));
  const ads = spec['activeDeadlineSeconds'];
  if (typeof ads === 'number' && ads <= 0) errs.push(fieldError.invalid(path.child('activeDeadlineSeconds'), ads, 'must be between 1 and 2147483647, inclusive'));
  return errs;
}
