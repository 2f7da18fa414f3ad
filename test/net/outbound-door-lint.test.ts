import { ESLint } from 'eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The outbound door holds because lint refuses every other way out: a new feature that calls `fetch`
 * or Node's request functions itself fails `npm run lint`, so it cannot forget the address policy.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const eslint = new ESLint({ cwd: root });

async function messagesFor(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).map((message) => `${message.ruleId ?? ''}: ${message.message}`);
}

const DOOR = /requests out go through the outbound door/;

describe('the lint rule of the outbound door', () => {
  test.each([
    [
      'a fetch call',
      'export async function ping(url: string): Promise<number> {\n  const response = await fetch(url);\n  return response.status;\n}\n',
    ],
    ['globalThis.fetch', 'export const ping = (url: string) => globalThis.fetch(url);\n'],
    [
      "node:http's request",
      "import { request } from 'node:http';\n\nexport const ping = (url: string) => request(url).end();\n",
    ],
    [
      "node:https' default export",
      "import https from 'node:https';\n\nexport const ping = (url: string) => https.get(url);\n",
    ],
    [
      'a raw socket',
      "import { connect } from 'node:net';\n\nexport const ping = (port: number) => connect(port, '127.0.0.1');\n",
    ],
    ['undici', "import { request } from 'undici';\n\nexport const ping = (url: string) => request(url);\n"],
  ])('refuses %s in a new file outside src/net', async (_name, code) => {
    const messages = await messagesFor('src/controller/new-feature.ts', code);
    expect(messages.some((message) => DOOR.test(message))).toBe(true);
  });

  test('allows the same call inside the door, and types and servers elsewhere', async () => {
    const call = 'export const ping = (url: string) => fetch(url);\n';
    expect((await messagesFor('src/net/new-kind.ts', call)).filter((m) => DOOR.test(m))).toEqual([]);
    const server =
      "import { createServer, type IncomingMessage } from 'node:http';\n\nexport const serve = (handle: (request: IncomingMessage) => void) => createServer(handle);\n";
    expect((await messagesFor('src/http/new-server.ts', server)).filter((m) => DOOR.test(m))).toEqual([]);
  });
});
