import { messageOf } from '../errors/message-of.js';
import type { CliIo } from './cli-io.js';
import { ExitCode } from './exit-codes.js';

/**
 * An exception no part of a command expected is a bug of applyset, never the user's input: it is said
 * so, with its stack for the report, and exits as a failure of the tool itself, so that neither a
 * person nor a script takes it for a bad flag.
 */
export function reportUnexpected(command: string, error: unknown, io: Pick<CliIo, 'stderr'>): ExitCode {
  // Read as a property: an error of Node's own modules may come from another realm than this code.
  const stack = (error as { stack?: unknown } | null)?.stack;
  const trace = typeof stack === 'string' ? stack : String(error);
  io.stderr.write(
    `applyset ${command}: unexpected error, a bug in applyset (please report it): ${messageOf(error)}\n${trace}\n`,
  );
  return ExitCode.failure;
}
