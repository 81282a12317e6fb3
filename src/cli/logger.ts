// The CLI's logger: JSON lines on stderr by default (what log collectors want), readable colored lines
// when stderr is a terminal. SETPOINT_LOG_FORMAT=json|pretty overrides.
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export function makeLogger(level: string, env: NodeJS.ProcessEnv = process.env): Logger {
  const format = env.SETPOINT_LOG_FORMAT ?? (process.stderr.isTTY ? 'pretty' : 'json');
  if (format === 'pretty') {
    return pino({ level }, pretty({ destination: 2, colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true, sync: true }));
  }
  return pino({ level }, pino.destination({ fd: 2, sync: false }));
}
