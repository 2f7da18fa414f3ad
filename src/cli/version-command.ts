// A file of its own, though small and with one importer, like every subcommand: main.ts loads each
// lazily by its file, so `applyset version` pays for nothing else.
import type { Command } from './cli-io.js';
import { ExitCode } from './exit-codes.js';
import { packageVersion } from '../package-version.js';

export const versionCommand: Command = async (_argv, io) => {
  io.stdout.write(`applyset ${packageVersion()}\n`);
  return ExitCode.ok;
};
