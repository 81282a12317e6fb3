// What the harness needs to know to run one kind of program: the ports it must be given, its command
// line, and how to tell that a started one serves. etcd and `setpoint store` members are kinds
// (kinds/store-member.ts); `setpoint server`, `setpoint apiserver`, `setpoint agent` and kubectl become
// kinds the same way, a small file each, and start through startProcess() with logs, waits and clean-up
// already taken care of.
import { join } from 'node:path';
import type { Command } from './command.js';
import { freePorts } from './free-port.js';
import { ManagedProcess } from './managed-process.js';
import type { ProcessOutput } from './managed-process.js';

export interface ProcessKind<Spec, Port extends string = string> {
  /** For messages: "etcd", "setpoint store", "setpoint apiserver", … */
  readonly name: string;
  /** The ports it listens on, by name; startProcess() finds free ones for those the spec leaves out. */
  readonly ports: readonly Port[];
  command(spec: Spec, ports: Readonly<Record<Port, number>>): Command;
  /** Whether the started process serves yet; asked again and again until it does or the process exits. */
  ready(spec: Spec, ports: Readonly<Record<Port, number>>): Promise<boolean>;
}

export interface StartedProcess<Port extends string> {
  readonly process: ManagedProcess;
  readonly ports: Readonly<Record<Port, number>>;
}

export interface StartOptions<Port extends string> {
  /** For messages and the log file's name. */
  readonly name: string;
  /** Where the log goes: `${dir}/${name}.log`. */
  readonly dir: string;
  /** Ports chosen by the caller (e.g. fixed ones); the rest are found free. */
  readonly ports?: Partial<Record<Port, number>>;
  readonly output?: Omit<ProcessOutput, 'logFile'>;
  readonly timeoutMs?: number;
}

/** Starts one process of a kind and waits until it serves; it is killed if it never does. */
export async function startProcess<Spec, Port extends string>(kind: ProcessKind<Spec, Port>, spec: Spec, o: StartOptions<Port>): Promise<StartedProcess<Port>> {
  const missing = kind.ports.filter((p) => o.ports?.[p] === undefined);
  const ports = { ...(await freePorts(missing)), ...o.ports } as Record<Port, number>;
  const process = new ManagedProcess(`${kind.name} ${o.name}`, kind.command(spec, ports), { ...o.output, logFile: join(o.dir, `${o.name}.log`) });
  process.start();
  try {
    await process.waitReady('serving', () => kind.ready(spec, ports), o.timeoutMs);
  } catch (e) {
    await process.kill('SIGKILL');
    throw e;
  }
  return { process, ports };
}
