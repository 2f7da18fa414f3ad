/** The exit status a Go program such as kubectl gets when SIGPIPE kills it: 128 + 13. */
const CLOSED_PIPE_EXIT_CODE = 141;

/**
 * When the reader of the output goes away (`applyset apply … | head -1`), the next write fails with
 * EPIPE. End then, quietly and with kubectl's status, instead of dying on an unhandled 'error' event with
 * a stack trace. Any other stream error stays fatal, as it was.
 */
export function exitOnClosedPipe(
  streams: readonly NodeJS.WritableStream[],
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      exit(CLOSED_PIPE_EXIT_CODE);
    });
  }
}
