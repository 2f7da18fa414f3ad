import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';

/**
 * Nothing inline, nothing from elsewhere: a name or message that slipped past escaping still could not
 * run a script or send data away.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function securityHeaders(): Record<string, string> {
  return {
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    // Nothing to other sites; to our own, the origin: under no-referrer a browser sends `Origin: null`
    // with the view's own forms, which the cross-origin check (cross-origin-refusal.ts) cannot tell
    // from a sandboxed page of another site.
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  };
}

export function send(
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string | string[]> = {},
): void {
  response.writeHead(status, {
    ...securityHeaders(),
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}

export function sendHtml(response: ServerResponse, status: number, page: string, headers = {}): void {
  send(response, status, 'text/html; charset=utf-8', page, headers);
}

export function redirect(
  response: ServerResponse,
  location: string,
  headers: Record<string, string | string[]> = {},
): void {
  response.writeHead(303, { ...securityHeaders(), Location: location, 'Content-Length': 0, ...headers });
  response.end();
}

/** The most a sign-in form may send: a token is a few kilobytes at most. */
const MAX_FORM_BYTES = 16 * 1024;

/** An `application/x-www-form-urlencoded` body; undefined when it is too large. */
export async function readForm(request: IncomingMessage): Promise<URLSearchParams | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** Whether the browser reached us over https, directly or through a proxy that says so. */
function isSecure(request: IncomingMessage): boolean {
  if ((request.socket as Partial<TLSSocket>).encrypted === true) return true;
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return first === 'https';
}

/** The cookie that holds the token: HttpOnly, SameSite=Strict, Path=/, Secure over https. */
export function tokenCookie(
  name: string,
  value: string,
  request: IncomingMessage,
  maxAgeSeconds?: number,
): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    'HttpOnly',
    'SameSite=Strict',
    'Path=/',
    ...(isSecure(request) ? ['Secure'] : []),
    ...(maxAgeSeconds === undefined ? [] : [`Max-Age=${maxAgeSeconds}`]),
  ].join('; ');
}
