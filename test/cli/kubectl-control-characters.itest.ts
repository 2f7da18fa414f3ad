import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { getObject, kubectl, writeSetDirectory } from '../apply/apply-test-kit.js';
import { characterCases, type CharacterCase } from '../manifests/control-character-cases.js';
import { freshNamespace, runCli } from './cli-test-kit.js';

// Issue #26: a control character in a YAML file (a DEL in a quoted string, say) is refused by
// kubectl's reader ("yaml: control characters are not allowed") and was applied by us. The same file
// goes through kubectl 1.33 and through applyset: the same verdict, the same words, the same objects.

async function kubectlApply(directory: string): Promise<{ ok: boolean; stderr: string }> {
  try {
    await kubectl(['apply', '-f', directory]);
    return { ok: true, stderr: '' };
  } catch (error) {
    return { ok: false, stderr: String((error as { stderr?: unknown }).stderr ?? error) };
  }
}

const dataOf = async (namespace: string, name: string) =>
  (await getObject(`/api/v1/namespaces/${namespace}/configmaps/${name}`))?.['data'];

describe('control characters through kubectl and through applyset', () => {
  let namespace: string;
  beforeAll(async () => {
    namespace = await freshNamespace('fid-chars');
  });

  it.each(characterCases.map((c, index) => [c.what, c, index] as const))(
    '%s',
    async (_what, c: CharacterCase, index) => {
      const file = (name: string) => c.file(name, namespace);
      const fileName = file('x').startsWith('{') ? 'object.json' : 'object.yaml';
      const [ours, theirs] = [`ours-${index}`, `theirs-${index}`];
      const ourDirectory = await writeSetDirectory({ [fileName]: file(ours) });
      const theirDirectory = await writeSetDirectory({ [fileName]: file(theirs) });
      const run = await runCli(applyCommand, [
        '-f',
        ourDirectory,
        '--applyset',
        `set-${index}`,
        '-n',
        namespace,
      ]);
      const reference = await kubectlApply(theirDirectory);

      expect({ kubectl: reference.ok, ours: run.code }).toEqual(
        c.verdict === 'applied'
          ? { kubectl: true, ours: ExitCode.ok }
          : { kubectl: false, ours: ExitCode.badInput },
      );
      if (c.refusal !== undefined) {
        expect(reference.stderr).toContain(c.refusal);
        expect(run.stderr).toContain(c.refusal);
      }
      // Applied: the same data in both objects. Refused: nothing of the file written.
      if (c.verdict === 'applied') {
        expect(await dataOf(namespace, ours)).toEqual(await dataOf(namespace, theirs));
        return;
      }
      expect(await dataOf(namespace, ours)).toBeUndefined();
      if (c.kubectlWritesEarlierDocuments === undefined) {
        expect(await dataOf(namespace, theirs)).toBeUndefined();
      }
    },
  );
});
