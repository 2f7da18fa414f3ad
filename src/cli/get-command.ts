import { parseDuration } from '../api/durations.js';
import { type ApplySet } from '../api/applyset-types.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import { applySetPath } from '../kube/applyset-api.js';
import { accessFlagSpecs, openApplySetAccess, readyOf } from './applyset-access.js';
import type { Command } from './cli-io.js';
import { ExitCode } from './exit-codes.js';
import { flagIsTrue, parseCommandLineWithArgs, UsageError } from './parse-command-line.js';
import { KubeConfigError } from '../kube/kubeconfig-error.js';

const usage = `usage: applyset get [NAME] [-n NAMESPACE | -A] [--kubeconfig PATH] [--context NAME]

Lists ApplySets with what a person asks first, as \`flux get kustomizations\` does: the revision
applied, whether the set is suspended, Ready and its message. -A lists every namespace.
`;

/** `applyset get`: one line per ApplySet of the namespace (or of every namespace with -A). */
export const getCommand: Command = async (argv, io) => {
  let parsed;
  try {
    parsed = parseCommandLineWithArgs(
      argv,
      { ...accessFlagSpecs, 'all-namespaces': { type: 'boolean', short: 'A' } },
      1,
    );
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`applyset get: ${error.message}\n\n${usage}`);
    return ExitCode.badInput;
  }
  const { flags, args } = parsed;
  if (flagIsTrue(flags, 'help')) {
    io.stdout.write(usage);
    return ExitCode.ok;
  }
  const all = flagIsTrue(flags, 'all-namespaces');
  const access = await openApplySetAccess(flags, io, 'get');
  if (typeof access === 'number') return access;
  const [name] = args;
  let items: ApplySet[];
  try {
    const answer = (await access.client.request({
      method: 'GET',
      path: applySetPath(all ? undefined : access.namespace, all ? undefined : name),
    })) as unknown as { items?: ApplySet[] } & ApplySet;
    items = name !== undefined && !all ? [answer] : (answer.items ?? []);
    if (all && name !== undefined) items = items.filter((item) => item.metadata.name === name);
  } catch (error) {
    if (error instanceof KubeApiError && error.notFound && name !== undefined) {
      io.stderr.write(`applyset get: applyset "${name}" not found in namespace ${access.namespace}\n`);
      return ExitCode.partialFailure;
    }
    io.stderr.write(`applyset get: ${(error as Error).message}\n`);
    // A credential the kubeconfig cannot give (an exec plugin that fails) is bad input.
    return error instanceof KubeConfigError ? ExitCode.badInput : ExitCode.failure;
  }
  if (items.length === 0) {
    io.stderr.write(`No ApplySets found${all ? '' : ` in namespace ${access.namespace}`}.\n`);
    return ExitCode.ok;
  }
  const rows = items.map((item) => {
    const ready = readyOf(item);
    return [
      ...(all ? [item.metadata.namespace] : []),
      item.metadata.name,
      item.status?.lastAppliedRevision ?? '',
      item.spec.suspend === true ? 'True' : 'False',
      ready.status,
      ready.message,
    ];
  });
  const header = [...(all ? ['NAMESPACE'] : []), 'NAME', 'REVISION', 'SUSPENDED', 'READY', 'MESSAGE'];
  io.stdout.write(formatTable([header, ...rows]));
  return ExitCode.ok;
};

/** kubectl's table: columns padded to the widest cell plus three spaces, the last one unpadded. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + 3))).join(''),
    )
    .join('\n')
    .concat('\n');
}

/** `--timeout` as a duration (`90s`, `2m`), as the other commands read durations. */
export function timeoutFlag(value: string | undefined, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  try {
    return parseDuration(value);
  } catch {
    throw new UsageError(`--timeout: not a duration: ${JSON.stringify(value)} (e.g. 90s, 2m)`);
  }
}
