import { ESLint } from 'eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { applySetAccount } from '../../src/api/applyset-account.js';

// Which account an ApplySet acts as is the tenancy's one rule. It lives in applySetAccount alone: the
// reconcile, the finalizer, the notifier, the web view, the Secret poller and the preview all ask it,
// and `npm run lint` fails a file that decides it again by itself.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const eslint = new ESLint({ cwd: root });

async function accountRuleErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === 'no-restricted-syntax')
    .map((message) => message.message);
}

describe('applySetAccount, the account an ApplySet acts as', () => {
  it('is spec.serviceAccountName, impersonated as that ServiceAccount of the set’s namespace', () => {
    expect(applySetAccount('team-a', { serviceAccountName: 'deployer' }, 'applyset-deployer')).toEqual({
      serviceAccount: 'deployer',
      user: 'system:serviceaccount:team-a:deployer',
    });
  });

  it('is the controller’s default account when the spec names none', () => {
    expect(applySetAccount('team-b', {}, 'applyset-deployer')).toEqual({
      serviceAccount: 'applyset-deployer',
      user: 'system:serviceaccount:team-b:applyset-deployer',
    });
    expect(applySetAccount('team-b', undefined, 'applyset-deployer').serviceAccount).toBe(
      'applyset-deployer',
    );
  });

  it('is the controller itself only when it runs with --apply-as-controller (no default) and the spec names none', () => {
    expect(applySetAccount('team-c', {}, undefined)).toEqual({ serviceAccount: undefined, user: undefined });
  });

  it.each([
    'export const who = (spec: { serviceAccountName?: string }) => spec.serviceAccountName ?? "default";\n',
    'export const user = (ns: string, sa: string) => `system:serviceaccount:${ns}:${sa}`;\n',
  ])('is decided nowhere else: lint fails a new file of src/ that does %s', async (code) => {
    expect(await accountRuleErrors('src/notify/new-receiver.ts', code)).toEqual([
      expect.stringContaining('decided only by applySetAccount'),
    ]);
  });

  it('lets code read the account without deciding it', async () => {
    const code =
      "import { applySetAccount } from './applyset-account.js';\n" +
      'export const user = (ns: string, spec: { serviceAccountName?: string }) => applySetAccount(ns, spec, undefined).user;\n';
    expect(await accountRuleErrors('src/notify/new-receiver.ts', code)).toEqual([]);
  });
});
