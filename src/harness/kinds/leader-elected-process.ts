// A leader-elected component (`setpoint scheduler`, `setpoint controller-manager`) started as a process for
// a test or a bench, with its JSON log lines kept as objects: started once its caches synced, and known by the
// identity it campaigns under (from its start line), so the caller can tell which one holds the Lease.
import type { ManagedProcess } from '../managed-process.js';
import { startProcess } from '../process-kind.js';
import { controllerManagerKind } from './controller-manager.js';
import { schedulerKind } from './scheduler.js';

export interface LeaderElectedProcess {
  readonly name: string;
  readonly proc: ManagedProcess;
  readonly lines: Record<string, unknown>[];
  readonly identity: string;
}

const KINDS = {
  scheduler: { kind: schedulerKind, startMessage: 'starting the scheduler' },
  'controller-manager': { kind: controllerManagerKind, startMessage: 'starting the controller manager' },
} as const;

export async function startLeaderElected(
  component: keyof typeof KINDS,
  o: { readonly name: string; readonly dir: string; readonly kubeconfig: string; readonly flags: readonly string[] },
): Promise<LeaderElectedProcess> {
  const lines: Record<string, unknown>[] = [];
  const onLine = (line: string): void => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      lines.push({ msg: line });
    }
  };
  const synced = (): boolean => lines.some((l) => l.msg === 'caches synced');
  const { kind, startMessage } = KINDS[component];
  const { process: proc } = await startProcess(kind, { kubeconfig: o.kubeconfig, flags: o.flags, synced }, { name: o.name, dir: o.dir, output: { onLine } });
  const identity = String(lines.find((l) => l.msg === startMessage)?.identity ?? '');
  return { name: o.name, proc, lines, identity };
}
