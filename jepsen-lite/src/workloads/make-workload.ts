// Workload names → fresh instances.
import type { Workload } from '../workload.js';
import { LockWorkload } from './lock.js';
import { RegisterWorkload } from './register.js';
import { SetWorkload } from './set.js';
import { WatchWorkload } from './watch.js';

export const WORKLOADS = ['register', 'set', 'watch', 'lock'] as const;

export function makeWorkload(name: string): Workload {
  switch (name) {
    case 'register':
      return new RegisterWorkload();
    case 'set':
      return new SetWorkload();
    case 'watch':
      return new WatchWorkload();
    case 'lock':
      return new LockWorkload();
    default:
      throw new Error(`unknown workload "${name}" (${WORKLOADS.join(', ')})`);
  }
}
