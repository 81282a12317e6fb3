// A component of a control-plane member kept running: its process is started again when it exits on its
// own (after 1 s, doubling to 30 s while it keeps failing, back to 1 s once a run has lasted a minute),
// each exit and restart logged. stop() ends it without a restart. Its stdin is a pipe it watches
// (SETPOINT_EXIT_WITH_PARENT), so a component never outlives a member that was killed outright.
import type { Logger } from 'pino';
import type { Command } from '../harness/command.js';
import { ManagedProcess } from '../harness/managed-process.js';

const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;
const HEALTHY_RUN_MS = 60_000;

export class Supervised {
  readonly process: ManagedProcess;
  private stopping = false;
  private delayMs = FIRST_DELAY_MS;
  private startedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  restarts = 0;

  constructor(
    readonly name: string,
    command: Command,
    private readonly log: Logger,
    onLine: (line: string) => void,
  ) {
    this.process = new ManagedProcess(name, { ...command, env: { ...command.env, SETPOINT_EXIT_WITH_PARENT: '1' } }, { onLine, stdin: true });
    this.process.onExit((exit, asked) => {
      if (asked || this.stopping) return;
      const ranMs = Date.now() - this.startedAt;
      if (ranMs >= HEALTHY_RUN_MS) this.delayMs = FIRST_DELAY_MS;
      this.log.warn({ component: name, code: exit.code, signal: exit.signal, restartInMs: this.delayMs }, 'component exited; restarting it');
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (this.stopping) return;
        this.restarts++;
        this.start();
      }, this.delayMs);
      this.delayMs = Math.min(MAX_DELAY_MS, this.delayMs * 2);
    });
  }

  start(): void {
    this.startedAt = Date.now();
    this.process.start();
    this.log.info({ component: this.name, pid: this.process.pid }, 'component started');
  }

  /** SIGTERM, then SIGKILL after `graceMs`; no restart follows. */
  async stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.process.running) await this.process.kill('SIGTERM', graceMs);
  }
}

/** For a component's own main: exit when the member that started it is gone (its stdin pipe closes). */
export function exitWithParent(env: NodeJS.ProcessEnv = process.env): void {
  if (env.SETPOINT_EXIT_WITH_PARENT !== '1') return;
  delete env.SETPOINT_EXIT_WITH_PARENT; // not passed on to what this process starts (pods)
  process.stdin.on('error', () => undefined);
  process.stdin.on('close', () => process.kill(process.pid, 'SIGTERM'));
  process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
  process.stdin.resume();
  // The pipe alone must not keep a component alive that has finished.
  (process.stdin as unknown as { unref?: () => void }).unref?.();
}
