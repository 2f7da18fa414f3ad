import { resolve } from 'node:path';
import { accessFlagSpecs, openApplySetAccess } from './applyset-access.js';
import type { CliIo, Command } from './cli-io.js';
import { ExitCode } from './exit-codes.js';
import { parseCommandLine, single, flagIsTrue, UsageError, type ParsedFlags } from './parse-command-line.js';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { PreviewSource } from '../preview/applyset-preview.js';
import { KUSTOMIZE_OPTIONS, kustomizeFlagsConfig } from './kustomize-flags.js';

const diffApplySetUsage = `usage: applyset diff --applyset-object NAME [-n NAMESPACE] [--local DIR | --ref REF]
                    [-o text|markdown] [--default-service-account NAME]
                    [--allowed-source-hosts HOST[:PORT],...] [--allow-cross-namespace-refs]
                    [--kustomize-binary PATH] [--kustomize-timeout 60s] [--kustomize-max-memory 256Mi]
                    [--helm-binary PATH] [--kubeconfig PATH] [--context NAME]

Prints what the controller's next reconcile of the ApplySet NAME would do, computed by the same steps
with the engine in dry run and writing nothing: the objects it would create (+), configure (~, with
the fields), adopt, prune (-) or hold back (=, with why: spec.prune false or DryRun, spec.pruneLimit,
another set's object), the objects it would fail on (!), and why the run would stop, if it would.
The manifests are read as the controller reads them: by default from the ApplySet's own ref; with
--ref REF from that branch, refs/tags/NAME or 40-digit commit of its repository (its
spec.source.secretRef Secret read as its account); with --local DIR from a checkout of the
repository, spec.source.path below DIR and spec.source.ignore applied.
It runs as the account the controller applies the ApplySet as (spec.serviceAccountName, else
--default-service-account, default applyset-deployer, as the controller's flag), which your
kubeconfig must be allowed to impersonate; otherwise it stops and says so.
A kustomization is built as the controller builds it, with --kustomize-binary (else
APPLYSET_KUSTOMIZE_BINARY, else kustomize on PATH, else kubectl kustomize), --kustomize-timeout and
--kustomize-max-memory as the controller's flags of those names; its sops files are decrypted first, with spec.decryption's Secret.
A chart (spec.helm) is rendered as the controller renders it, with --helm-binary (else APPLYSET_HELM_BINARY,
else helm on PATH).
A repository on a loopback, private or link-local address is fetched only when
--allowed-source-hosts names its host, as the controller's flag of that name says.
A suspended ApplySet, or one whose spec.dependsOn names an ApplySet not Ready, is applied nothing
now: the first line says so, the dependencies waited for are named with their Ready reason, and the
rest says what the run would do once it may. A dependency of another namespace is refused, as the
controller refuses it, unless --allow-cross-namespace-refs (the controller's flag of that name).
With driftMode Warn, an object changed on the cluster since the revision was applied is listed as
drift the run would only report (?), with the Drifted condition's message, not as a change.
Every write is sent to the API server as the account with dryRun=All, as kubectl diff does: a change
the server, an admission webhook or a ValidatingAdmissionPolicy refuses is an object the run would
fail on (!), and a mutating webhook's change is among the fields.
A preview that could not be computed (kustomize missing, a source host not allowed, the run would
stall) prints one line, "could not be previewed: REASON: message", and the problems found; no counts.
-o markdown prints a pull-request comment. A Secret's values are shown as *** (before) / *** (after),
a stringData change as the data keys it changes.
Exit 0 when nothing would change, 1 when something would (or the prune limit would stop the run),
2 for bad input, 3 when the preview could not be computed (or an object would fail).
`;

const specs = {
  ...accessFlagSpecs,
  'applyset-object': { type: 'string' },
  local: { type: 'string' },
  ref: { type: 'string' },
  output: { type: 'string', short: 'o' },
  'default-service-account': { type: 'string' },
  'allowed-source-hosts': { type: 'string' },
  'allow-cross-namespace-refs': { type: 'boolean' },
  ...KUSTOMIZE_OPTIONS,
} as const;

interface PreviewFlags {
  readonly flags: ParsedFlags;
  readonly name: string;
  readonly source: PreviewSource;
  readonly output: 'text' | 'markdown';
  readonly kustomize: KustomizeOptions;
}

function parse(argv: readonly string[], io: CliIo): PreviewFlags | number {
  try {
    const flags = parseCommandLine(argv, specs);
    if (flagIsTrue(flags, 'help')) {
      io.stdout.write(diffApplySetUsage);
      return ExitCode.ok;
    }
    const name = single(flags, 'applyset-object');
    if (name === undefined || name === '')
      throw new UsageError('--applyset-object needs the name of an ApplySet');
    const local = single(flags, 'local');
    const ref = single(flags, 'ref');
    if (local !== undefined && ref !== undefined)
      throw new UsageError('--local and --ref exclude each other');
    const output = single(flags, 'output') ?? 'text';
    if (output !== 'text' && output !== 'markdown') {
      throw new UsageError(`-o must be text or markdown, got "${output}"`);
    }
    const source: PreviewSource =
      local !== undefined
        ? { kind: 'local', directory: resolve(io.cwd, local) }
        : ref !== undefined
          ? { kind: 'ref', ref }
          : { kind: 'applyset-ref' };
    const kustomize = kustomizeFlagsConfig(flags, io.env);
    return { flags, name, source, output, kustomize };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`applyset diff: ${error.message}\n\n${diffApplySetUsage}`);
    return ExitCode.badInput;
  }
}

/**
 * `applyset diff --applyset-object NAME`: the preview of an ApplySet (src/preview/), printed as text
 * or Markdown. Like `kubectl diff`: exit 0 no change, 1 changes, 2 bad input, 3 not computed.
 */
export const diffApplySetCommand: Command = async (argv, io) => {
  const parsed = parse(argv, io);
  if (typeof parsed === 'number') return parsed;
  const fail = (message: string, code: number) => {
    io.stderr.write(`applyset diff: ${message}\n`);
    return code;
  };
  // Loaded only now: `--help` and usage errors do not wait for the engine and the clients. One after
  // the other: modules imported at once that share a module not yet loaded can fail to link ("request
  // for './applyset-types.js' is not in cache") under Node's VM modules, which the tests run on.
  const { previewAccessOf } = await import('./preview-access.js');
  const { previewApplySet } = await import('../preview/preview-applyset.js');
  const { classifyFailure } = await import('../errors/classify-failure.js');
  const format = await import('../preview/format-preview.js');
  const entries = await import('../preview/preview-entries.js');
  const access = await openApplySetAccess(parsed.flags, io, 'diff');
  if (typeof access === 'number') return access;
  let preview;
  try {
    const account = single(parsed.flags, 'default-service-account');
    preview = await previewApplySet({
      namespace: access.namespace,
      name: parsed.name,
      source: parsed.source,
      access: previewAccessOf(access, parsed.flags, io),
      kustomize: parsed.kustomize,
      allowCrossNamespaceRefs: flagIsTrue(parsed.flags, 'allow-cross-namespace-refs'),
      ...(account === undefined ? {} : { defaultServiceAccountName: account }),
    });
  } catch (error) {
    // The preview's own refusals say what to do; anything else is how the computation failed.
    const { reason, message, unexpected } = classifyFailure(error);
    const said = unexpected ? `the preview could not be computed: ${message}` : message;
    return fail(said, reason === 'ApplySetNotFound' ? ExitCode.badInput : ExitCode.failure);
  }
  io.stdout.write(
    parsed.output === 'markdown' ? format.formatPreviewMarkdown(preview) : format.formatPreviewText(preview),
  );
  if (preview.stopped?.reason === 'PruneLimitExceeded') return ExitCode.partialFailure;
  if (preview.stopped !== undefined) return ExitCode.failure;
  if (preview.entries.some((entry) => entry.kind === 'error')) return ExitCode.failure;
  return entries.previewChangesSomething(preview) ? ExitCode.partialFailure : ExitCode.ok;
};

/** Whether `applyset diff` was asked for an ApplySet's preview rather than a diff of files. */
export function namesApplySetObject(argv: readonly string[]): boolean {
  return argv.some((arg) => arg === '--applyset-object' || arg.startsWith('--applyset-object='));
}
