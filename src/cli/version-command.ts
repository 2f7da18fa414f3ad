// A file of its own, though small and with one importer, like every subcommand: main.ts loads each
// lazily by its file, so `applyset version` pays for nothing else.
import { createRequire } from 'node:module';
import type { Command } from './cli-io.js';
import { ExitCode } from './exit-codes.js';

export const versionCommand: Command = async (_argv, io) => {
  const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
  io.stdout.write(`applyset ${pkg.version}\n`);
  return ExitCode.ok;
};
