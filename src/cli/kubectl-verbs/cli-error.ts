// The CLI's own failures (a bad argument, a file that does not parse, an unknown resource type) and the
// one place every failure becomes kubectl's line on stderr: `Error from server (NotFound): …` for a
// Status from the API, `error: …` for everything else. Exit 1, never a stack trace.
import { ApiStatusError, ClientError } from '../../client/api-status-error.js';

export type CliErrorCode = 'CLI_USAGE' | 'CLI_INPUT' | 'CLI_UNKNOWN_RESOURCE' | 'CLI_WAIT';

export class CliError extends Error {
  constructor(
    readonly code: CliErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** kubectl's line for an error from the server: StandardErrorMessage in kubectl's cmdutil. */
export function serverErrorLine(e: ApiStatusError, context?: string): string {
  const reason = e.reason === '' ? 'Unknown' : e.reason;
  return context !== undefined ? `Error from server (${reason}): ${context}: ${e.message}` : `Error from server (${reason}): ${e.message}`;
}

export function errorLine(e: unknown): string {
  if (e instanceof ApiStatusError) return serverErrorLine(e);
  if (e instanceof ClientError) {
    const cause = e.cause as (NodeJS.ErrnoException & { address?: string; port?: number }) | undefined;
    // kubectl's wording when nothing listens where the kubeconfig points.
    if (e.code === 'CLIENT_TRANSPORT' && cause?.code === 'ECONNREFUSED') {
      const where = cause.address !== undefined ? `${cause.address}${cause.port !== undefined ? `:${cause.port}` : ''}` : 'the server';
      return `The connection to the server ${where} was refused - did you specify the right host or port?`;
    }
    return `error: ${e.message}`;
  }
  if (e instanceof CliError) return `error: ${e.message}`;
  if (e instanceof Error) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ECONNRESET') return `error: the server is not reachable: ${e.message}`;
    return `error: ${e.message}`;
  }
  return `error: ${String(e)}`;
}
