/** Ready-made `authenticate` hooks: HTTP Basic (app id + secret) and bearer tokens, compared in constant time. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Authenticate, AuthRequest } from './types.js';

/** Hashing both sides first gives equal lengths, so timingSafeEqual never leaks a length. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

function credentials(req: AuthRequest, scheme: string): string | undefined {
  const header = req.headers.get('authorization');
  if (!header) return undefined;
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space).toLowerCase() !== scheme) return undefined;
  return header.slice(space + 1).trim();
}

/**
 * HTTP Basic with the service's app-id/secret pairs; the app id becomes the user.
 * @example createNodeHandler(store, { authenticate: basicAuth({ 'etl-app': process.env.ETL_SECRET! }) })
 */
export function basicAuth(apps: Record<string, string>, realm = 'consolidata'): Authenticate {
  if (apps === null || typeof apps !== 'object') throw new TypeError('basicAuth: expected an object of { appId: secret }');
  const table = new Map<string, string>();
  for (const [id, secret] of Object.entries(apps)) {
    if (typeof secret !== 'string' || secret === '') throw new TypeError(`basicAuth: the secret of "${id}" must be a non-empty string`);
    if (id === '' || id.includes(':')) throw new TypeError(`basicAuth: app id ${JSON.stringify(id)} must be non-empty and without ":"`);
    table.set(id, secret);
  }
  const check: Authenticate = (req) => {
    const encoded = credentials(req, 'basic');
    if (!encoded) return null;
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return null;
    const id = decoded.slice(0, colon);
    const expected = table.get(id);
    // Compare against a dummy for unknown ids so their timing matches a wrong secret.
    const ok = sameSecret(decoded.slice(colon + 1), expected ?? '\0unknown');
    return ok && expected !== undefined ? { userId: id } : null;
  };
  check.challenge = `Basic realm="${realm}", charset="UTF-8"`;
  return check;
}

/**
 * Bearer tokens; the user is `token:<n>` (the token's position), or the name given in a `{ token: userId }` object.
 * @example createFetchHandler(store, { authenticate: bearerAuth([process.env.API_TOKEN!]) })
 */
export function bearerAuth(tokens: readonly string[] | Record<string, string>, realm = 'consolidata'): Authenticate {
  const entries: [string, string][] = Array.isArray(tokens)
    ? tokens.map((t, i) => [t, `token:${i}`])
    : Object.entries(tokens ?? {}).map(([token, user]) => [token, user]);
  if (!Array.isArray(tokens) && (tokens === null || typeof tokens !== 'object')) throw new TypeError('bearerAuth: expected an array of tokens');
  for (const [token, user] of entries) {
    if (typeof token !== 'string' || token === '') throw new TypeError('bearerAuth: every token must be a non-empty string');
    if (typeof user !== 'string' || user === '') throw new TypeError('bearerAuth: every user id must be a non-empty string');
  }
  const check: Authenticate = (req) => {
    const given = credentials(req, 'bearer');
    if (!given) return null;
    let user: string | undefined;
    // Compare with every token, so the answer time does not depend on which one matched.
    for (const [token, id] of entries) if (sameSecret(given, token) && user === undefined) user = id;
    return user === undefined ? null : { userId: user };
  };
  check.challenge = `Bearer realm="${realm}"`;
  return check;
}
