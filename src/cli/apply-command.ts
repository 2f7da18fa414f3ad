import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ApplySetRequest, ApplySetResult, ObjectOutcome } from '../apply/apply-set-contract.js';
import { isApplySetInputError } from '../apply/apply-set-input-error.js';
import { configMapParent } from '../apply/config-map-parent.js';
import { createApplySetEngine } from '../apply/create-apply-set-engine.js';
import { createKubeClient } from '../kube/kube-client.js';
import { contextNamespace, KubeConfigError, loadKubeConfig } from '../kube/load-kube-config.js';
import { describeManifestSource } from '../manifests/manifest-error.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import { readManifestDirectory } from '../manifests/read-manifest-directory.js';
import type { CliIo, Command } from './cli-io.js';
import { ExitCode } from './exit-codes.js';

const usage = `usage: applyset apply -f DIR --applyset NAME [-n NAMESPACE] [--prune] [--dry-run]
                     [--allow-empty] [--force] [--kubeconfig PATH]

Applies every .yaml, .yml and .json file under DIR as one set, exactly as kubectl apply would, and
records the set in the ConfigMap NAME (the apply-config object, created if missing). With --prune,
objects the set applied before and that left DIR are deleted, if this set still owns them.
--dry-run prints what would be added, modified (with a field-level diff), left unchanged and deleted.
Exit codes: 0 ok, 1 some objects failed or conflicted, 2 bad input (nothing written), 3 failure.
`;

export interface ApplySetFlags {
  readonly dir: string;
  readonly applyset: string;
  readonly namespace: string | undefined;
  readonly prune: boolean;
  readonly dryRun: boolean;
  readonly allowEmpty: boolean;
  readonly force: boolean;
  readonly kubeconfig: string | undefined;
}

class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'USAGE';
}

/** `applyset apply`: the engine on a directory, with a ConfigMap as the apply-config object. */
export const applyCommand: Command = async (argv, io) => {
  const flags = parseFlags('apply', argv, io);
  if (typeof flags === 'number') return flags;
  const run = await runEngine('apply', flags, io, { dryRun: flags.dryRun, prune: flags.prune });
  if (typeof run === 'number') return run;
  const { result } = run;
  if (flags.dryRun) {
    io.stdout.write(formatDryRun(result.outcomes));
  } else {
    for (const outcome of result.outcomes) writeOutcome(outcome, io);
  }
  io.stdout.write(`${summaryLine(result, flags.dryRun)}\n`);
  return result.outcomes.some((o) => o.action === 'failed' || o.action === 'conflict')
    ? ExitCode.partialFailure
    : ExitCode.ok;
};

export function parseFlags(name: string, argv: readonly string[], io: CliIo): ApplySetFlags | number {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        filename: { type: 'string', short: 'f' },
        applyset: { type: 'string' },
        namespace: { type: 'string', short: 'n' },
        prune: { type: 'boolean', default: false },
        'dry-run': { type: 'boolean', default: false },
        'allow-empty': { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        kubeconfig: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      io.stdout.write(usage);
      return ExitCode.ok;
    }
    if (values.filename === undefined) throw new UsageError('-f DIR is required');
    if (values.applyset === undefined) throw new UsageError('--applyset NAME is required');
    // kubectl's --applyset takes `[RESOURCE][.GROUP]/NAME`; the command's parent is always a ConfigMap.
    const applyset = values.applyset.replace(/^(configmap|configmaps)\//, '');
    if (applyset === '' || applyset.includes('/')) {
      throw new UsageError(
        `--applyset must name a ConfigMap (NAME or configmap/NAME), got "${values.applyset}"`,
      );
    }
    return {
      dir: resolve(io.cwd, values.filename),
      applyset,
      namespace: values.namespace,
      prune: values.prune,
      dryRun: values['dry-run'],
      allowEmpty: values['allow-empty'],
      force: values.force,
      kubeconfig: values.kubeconfig === undefined ? undefined : resolve(io.cwd, values.kubeconfig),
    };
  } catch (error) {
    io.stderr.write(`applyset ${name}: ${messageOf(error)}\n\n${usage}`);
    return ExitCode.badInput;
  }
}

/** Reads the directory, builds the client and the engine, runs it; maps thrown errors to exit codes. */
export async function runEngine(
  name: string,
  flags: ApplySetFlags,
  io: CliIo,
  mode: Pick<ApplySetRequest, 'dryRun' | 'prune'>,
): Promise<{ result: ApplySetResult } | number> {
  let files;
  try {
    files = await readManifestDirectory(flags.dir);
  } catch (error) {
    io.stderr.write(`applyset ${name}: cannot read ${flags.dir}: ${messageOf(error)}\n`);
    return ExitCode.badInput;
  }
  try {
    const { kubeConfig } = loadKubeConfig(io.env, flags.kubeconfig);
    const namespace = flags.namespace ?? contextNamespace(kubeConfig);
    const engine = createApplySetEngine({ kubeClient: createKubeClient({ kubeConfig }) });
    const result = await engine({
      files,
      parent: configMapParent(namespace, flags.applyset),
      defaultNamespace: namespace,
      enforceNamespace: flags.namespace !== undefined,
      prune: mode.prune,
      allowEmpty: flags.allowEmpty,
      force: flags.force,
      adopt: true,
      dryRun: mode.dryRun,
    });
    return { result };
  } catch (error) {
    if (isApplySetInputError(error)) {
      for (const problem of error.problems) io.stderr.write(`error: ${problem}\n`);
      io.stderr.write(`applyset ${name}: the input was refused; nothing was written\n`);
      return ExitCode.badInput;
    }
    if (error instanceof KubeConfigError) {
      io.stderr.write(`applyset ${name}: ${error.message}\n`);
      return ExitCode.badInput;
    }
    io.stderr.write(`applyset ${name}: ${messageOf(error)}\n`);
    return ExitCode.failure;
  }
}

/** `deployment.apps/web`, `configmap/x`: the name kubectl prints in its per-object lines. */
export function kubectlName(ref: ObjectRef): string {
  const type = ref.group === '' ? ref.kind.toLowerCase() : `${ref.kind.toLowerCase()}.${ref.group}`;
  return `${type}/${ref.name}`;
}

function where(ref: ObjectRef): string {
  return ref.namespace === '' ? kubectlName(ref) : `${kubectlName(ref)} (namespace ${ref.namespace})`;
}

function writeOutcome(outcome: ObjectOutcome, io: CliIo): void {
  switch (outcome.action) {
    case 'created':
    case 'configured':
    case 'unchanged':
    case 'pruned':
      io.stdout.write(`${kubectlName(outcome.ref)} ${outcome.action}\n`);
      break;
    case 'prune-skipped':
      io.stdout.write(`${kubectlName(outcome.ref)} not pruned: ${outcome.reason}\n`);
      break;
    case 'conflict':
    case 'failed': {
      const from = outcome.source === undefined ? '' : `${describeManifestSource(outcome.source)}: `;
      io.stderr.write(`error: ${from}${where(outcome.ref)}: ${outcome.message}\n`);
      break;
    }
    case 'would-create':
    case 'would-configure':
    case 'would-prune':
      io.stdout.write(`${kubectlName(outcome.ref)} ${outcome.action}\n`);
      break;
  }
}

/** The prune proposal's dry-run categories, each object with its namespace, modifications with their fields. */
export function formatDryRun(outcomes: readonly ObjectOutcome[]): string {
  const lines: string[] = [];
  const section = (title: string, entries: readonly string[]) => {
    lines.push(title, ...(entries.length === 0 ? ['  (none)'] : entries.map((entry) => `  ${entry}`)));
  };
  const of = (action: ObjectOutcome['action']) => outcomes.filter((o) => o.action === action);
  section(
    'Resources to add',
    of('would-create').map((o) => where(o.ref)),
  );
  section(
    'Resources modified',
    of('would-configure').flatMap((o) => [
      where(o.ref),
      ...(o.action === 'would-configure' ? (o.diff ?? []) : []).map((line) => `  ${line}`),
    ]),
  );
  section(
    'Resources unmodified',
    of('unchanged').map((o) => where(o.ref)),
  );
  section(
    'Resources to delete',
    of('would-prune').map((o) => where(o.ref)),
  );
  const others = outcomes.flatMap((o) =>
    o.action === 'conflict' || o.action === 'failed'
      ? [`${where(o.ref)}: ${o.message}`]
      : o.action === 'prune-skipped'
        ? [`${where(o.ref)}: not pruned, ${o.reason}`]
        : [],
  );
  if (others.length > 0) section('Left untouched', others);
  return `${lines.join('\n')}\n`;
}

function summaryLine(result: ApplySetResult, dryRun: boolean): string {
  const count = (action: ObjectOutcome['action']) =>
    result.outcomes.filter((o) => o.action === action).length;
  if (dryRun) {
    return (
      `dry run: ${count('would-create')} to add, ${count('would-configure')} to modify, ` +
      `${count('unchanged')} unchanged, ${count('would-prune')} to delete, ` +
      `${count('conflict') + count('failed')} conflicts or errors; nothing was written`
    );
  }
  return (
    `${count('created')} created, ${count('configured')} configured, ${count('unchanged')} unchanged, ` +
    `${count('pruned')} pruned, ${count('prune-skipped')} not pruned, ${count('conflict')} conflicts, ` +
    `${count('failed')} failed`
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
