import { createRequire } from 'node:module';
import type { Command } from './cli-io.js';
import { ExitCode } from './exit-codes.js';

export const versionCommand: Command = async (_argv, io) => {
  const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
  io.stdout.write(`applyset ${pkg.version}\n`);
  return ExitCode.ok;
};
