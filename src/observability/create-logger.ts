import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino blanks out wherever they appear in a log record: Git credentials and Secret data must never
 * reach the logs, even when an object holding them is logged by mistake.
 */
const REDACTED_PATHS = [
  'password',
  'token',
  'auth',
  'credentials',
  'authorization',
  'identity',
  'passphrase',
  'privateKey',
  '*.password',
  '*.token',
  '*.auth',
  '*.credentials',
  '*.authorization',
  '*.identity',
  '*.passphrase',
  '*.privateKey',
  '*.headers.authorization',
  'data',
  '*.data',
  'stringData',
  '*.stringData',
];

/** The controller's JSON logger, writing to `destination` (stdout by default). */
export function createLogger(options: {
  readonly level?: string;
  readonly destination?: NodeJS.WritableStream;
}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
      base: { component: 'applyset-controller' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? process.stdout,
  );
}
