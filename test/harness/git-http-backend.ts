import { spawn } from 'node:child_process';
import http from 'node:http';

// The test Git server's HTTP side: `git http-backend` run as a CGI program for each request, behind
// optional HTTP basic auth, with every answered request recorded.

const MAX_LOGGED_BODY = 1024 * 1024;

interface GitServerCredentials {
  readonly username: string;
  readonly password: string;
}

/**
 * Credentials that change while the server runs (a GitHub App's installation tokens, issued by the test's
 * stand-in for GitHub): `accepts` is asked for each request's Basic username and password.
 */
export interface GitServerCredentialCheck {
  readonly accepts: (username: string, password: string) => boolean;
}

export type GitServerAuth = GitServerCredentials | GitServerCredentialCheck;

/** One request the server answered, for tests that assert what a client asked for. */
export interface GitServerRequest {
  readonly method: string;
  /** Path and query, as requested. */
  readonly url: string;
  readonly status: number;
  /** The authenticated user, when auth is on and succeeded. */
  readonly user: string | undefined;
  /** Whether the request carried an Authorization header, right or wrong, auth on or off. */
  readonly authorization: boolean;
  /** The request body of POSTs up to 1 MiB (pkt-lines: `want`, `have`, `deepen` …), else empty. */
  readonly body: Buffer;
}

interface BackendHandlerOptions {
  readonly projectRoot: string;
  readonly baseEnv: NodeJS.ProcessEnv;
  readonly auth: GitServerAuth | undefined;
  readonly onChild: (child: ReturnType<typeof spawn>) => void;
  readonly onRequest: (request: GitServerRequest) => void;
}

/** The CGI gateway: one `git http-backend` process per request, body streamed in, response streamed out. */
export function createBackendHandler(options: BackendHandlerOptions): http.RequestListener {
  return (req, res) => {
    const method = req.method ?? 'GET';
    const rawUrl = req.url ?? '/';
    const bodyChunks: Buffer[] = [];
    let bodySize = 0;
    const record = (status: number, user: string | undefined) =>
      options.onRequest({
        method,
        url: rawUrl,
        status,
        user,
        authorization: req.headers.authorization !== undefined,
        body: bodySize <= MAX_LOGGED_BODY ? Buffer.concat(bodyChunks) : Buffer.alloc(0),
      });

    const user = authenticate(req.headers.authorization, options.auth);
    if (user === false) {
      req.resume();
      res.writeHead(401, {
        'WWW-Authenticate': 'Basic realm="git test server"',
        'Content-Type': 'text/plain',
      });
      res.end('authentication required\n');
      record(401, undefined);
      return;
    }

    const parsed = new URL(rawUrl, 'http://127.0.0.1');
    const env: NodeJS.ProcessEnv = {
      ...options.baseEnv,
      GIT_PROJECT_ROOT: options.projectRoot,
      GIT_HTTP_EXPORT_ALL: '1',
      GATEWAY_INTERFACE: 'CGI/1.1',
      SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
      REQUEST_METHOD: method,
      PATH_INFO: decodeURIComponent(parsed.pathname),
      QUERY_STRING: parsed.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      REMOTE_USER: user ?? '',
    };
    // http-backend reads CONTENT_LENGTH bytes when it is set and until EOF when not (chunked bodies).
    if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
    // http-backend inflates gzip'ed request bodies itself (real git clients gzip large upload-pack requests).
    if (req.headers['content-encoding'] !== undefined)
      env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
    if (typeof req.headers['git-protocol'] === 'string') env.GIT_PROTOCOL = req.headers['git-protocol'];

    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    options.onChild(child);
    const stderr: Buffer[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    req.on('data', (chunk: Buffer) => {
      bodySize += chunk.length;
      if (bodySize <= MAX_LOGGED_BODY) bodyChunks.push(chunk);
    });
    req.pipe(child.stdin);
    // A client that hangs up mid-request leaves the backend with nobody to answer.
    child.stdin.on('error', () => child.kill('SIGKILL'));
    res.on('close', () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });

    let head = Buffer.alloc(0);
    let headersSent = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersSent) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const split = findHeaderEnd(head);
      if (split === undefined) return;
      const { status, headers } = parseCgiHeaders(head.subarray(0, split.index).toString('latin1'));
      headersSent = true;
      res.writeHead(status, headers);
      record(status, user);
      const rest = head.subarray(split.index + split.length);
      if (rest.length > 0) res.write(rest);
    });
    child.on('close', (code) => {
      if (!headersSent) {
        const message = `git http-backend exited with ${code}: ${Buffer.concat(stderr).toString('utf8')}`;
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(message);
        record(500, user);
        return;
      }
      res.end();
    });
  };
}

/** The user name when the credentials match (or auth is off: undefined); false when they do not. */
function authenticate(
  header: string | undefined,
  auth: GitServerAuth | undefined,
): string | undefined | false {
  if (auth === undefined) return undefined;
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (match?.[1] === undefined) return false;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  const username = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  if ('accepts' in auth) return auth.accepts(username, password) ? username : false;
  return username === auth.username && password === auth.password ? username : false;
}

function findHeaderEnd(buffer: Buffer): { index: number; length: number } | undefined {
  const crlf = buffer.indexOf('\r\n\r\n');
  const lf = buffer.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { index: crlf, length: 4 };
  if (lf >= 0) return { index: lf, length: 2 };
  return undefined;
}

/** CGI response headers: `Status: 404 Not Found` sets the status, the rest pass through. */
function parseCgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers[name] = value;
  }
  return { status, headers };
}
