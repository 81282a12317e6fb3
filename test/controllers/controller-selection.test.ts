// `--controllers` as kube-controller-manager reads it.
import { describe, expect, it } from 'vitest';
import type { ControllerEntry } from '../../src/controllers/all-controllers.js';
import { selectControllers } from '../../src/controllers/controller-manager.js';

const noop = (): never => {
  throw new Error('not built in this test');
};
const ALL: ControllerEntry[] = [
  { name: 'replicaset', factory: noop },
  { name: 'deployment', factory: noop },
  { name: 'bootstrap-signer', factory: noop, enabledByDefault: false },
];

describe('selectControllers', () => {
  it.each<[string, string[]]>([
    ['*', ['replicaset', 'deployment']],
    ['*,-deployment', ['replicaset']],
    ['deployment', ['deployment']],
    ['*,bootstrap-signer', ['replicaset', 'deployment', 'bootstrap-signer']],
    ['-replicaset', []],
    ['', []],
  ])('%j → %j', (flag, want) => {
    expect(selectControllers(flag.split(','), ALL)).toEqual(want);
  });

  it('an unknown name is an error that lists the known ones', () => {
    expect(() => selectControllers(['*', '-nope'], ALL)).toThrow('"nope" is not in the list of known controllers: bootstrap-signer, deployment, replicaset');
  });
});
