// `setpoint scheduler` as a process kind: this checkout's build on a kubeconfig, with its flags. It listens
// on no port; it counts as started once its caches have synced (its log says so), so a test that starts
// a candidate knows it is campaigning with warm caches.
import type { Command } from '../command.js';
import type { ProcessKind } from '../process-kind.js';
import { setpointMain } from '../setpoint-main.js';

export interface SchedulerSpec {
  readonly kubeconfig: string;
  /** More flags (`--leader-elect-resource-name=…`, `--log-level=debug`, …). */
  readonly flags?: readonly string[];
  /** Whether the process has logged that its caches synced (the caller reads its output). */
  readonly synced: () => boolean;
  readonly env?: Readonly<Record<string, string>>;
}

export const schedulerKind: ProcessKind<SchedulerSpec, never> = {
  name: 'setpoint scheduler',
  ports: [],
  command: (spec): Command => ({
    bin: process.execPath,
    args: [setpointMain(), 'scheduler', `--kubeconfig=${spec.kubeconfig}`, ...(spec.flags ?? [])],
    env: { SETPOINT_LOG_FORMAT: 'json', ...spec.env },
  }),
  ready: (spec) => Promise.resolve(spec.synced()),
};
