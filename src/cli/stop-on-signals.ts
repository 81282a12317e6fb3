// A long-running command's exit: on SIGTERM or SIGINT, stop once, then exit 0 (1 if stopping failed).
import type { Logger } from 'pino';

export function stopOnSignals(log: Logger, stop: () => Promise<void>): { readonly stopping: boolean } {
  const state = { stopping: false };
  const onSignal = (signal: string): void => {
    if (state.stopping) return;
    state.stopping = true;
    log.info({ signal }, 'stopping');
    stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: e }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  return state;
}
