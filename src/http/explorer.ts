/** The data explorer's files (built into dist/explorer by `npm run build`), served under a path of the user's choice. */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { envelope, fail } from '../envelope.js';
import { listed, type CoreResponse } from './types.js';

/** Every file the page is made of, with its content type: nothing else under the explorer's path is read from disk. */
const ASSETS: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'counties-10m.json': 'application/json; charset=utf-8',
};

/** dist/explorer beside the chunk of dist/ that holds this code (the CJS build has import.meta.url shimmed). */
export function defaultExplorerDir(): string {
  // import.meta first: an ES module can see a global __filename that is not its own (`node -e` defines one).
  const here = fileURLToPath((import.meta as { url?: string }).url ?? pathToFileURL(__filename).href);
  return join(dirname(here), 'explorer');
}

/** The API's base path as a URL relative to the explorer's page, so both move together when a host mounts them under a prefix. */
export function relativeApiPath(explorerPath: string, basePath: string): string {
  const up = explorerPath.split('/').filter(Boolean).map(() => '..');
  // No trailing slash: the page appends `/data/…`.
  return [...up, ...basePath.split('/').filter(Boolean)].join('/') || '.';
}

/**
 * Serves the explorer's files under `path` (normalised: `''` is the root); `answer` is undefined outside it.
 * The page learns where the API is from a meta tag, so it works under any mount point.
 * @example const explorer = createExplorer({ path: '', basePath: '/api' }); await explorer.answer('/app.js');
 */
export function createExplorer(options: { path: string; basePath: string; dir?: string }) {
  const dir = options.dir ?? defaultExplorerDir();
  const api = relativeApiPath(options.path, options.basePath);
  const cache = new Map<string, Promise<string>>();

  /** The file name asked for under the explorer's path, `''` for the page itself, or undefined outside it. */
  function fileOf(path: string): string | undefined {
    if (path === options.path) return '';
    if (!path.startsWith(`${options.path}/`)) return undefined;
    const name = path.slice(options.path.length + 1);
    return name === '' ? 'index.html' : name;
  }

  function load(name: string): Promise<string> {
    let text = cache.get(name);
    if (!text) {
      text = readFile(join(dir, name), 'utf8').then((t) => (name === 'index.html' ? t.replace('%API_PATH%', api) : t));
      // A file that is missing now (the explorer not built yet) is looked for again next time.
      text.catch(() => cache.delete(name));
      cache.set(name, text);
    }
    return text;
  }

  async function answer(path: string, method: string): Promise<CoreResponse | undefined> {
    const name = fileOf(path);
    if (name === undefined) return undefined;
    const common = { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };
    // `/explore` has no trailing slash: the page's relative URLs need one.
    if (name === '') return { status: 308, headers: { ...common, location: `${path.split('/').pop() || '.'}/` }, envelope: envelope() };
    if (method !== 'GET' && method !== 'HEAD') {
      return { status: 405, headers: { 'content-type': 'application/json; charset=utf-8', allow: 'GET, HEAD' }, envelope: fail([{ code: 'METHOD_NOT_ALLOWED', message: `${method} is not allowed on ${path}; use GET` }]) };
    }
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!type) return { status: 404, headers: { 'content-type': 'application/json; charset=utf-8' }, envelope: fail([{ code: 'NOT_FOUND', message: `no route GET ${path}` }]) };
    let text: string;
    try {
      text = await load(name);
    } catch {
      return {
        status: 404,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        envelope: fail([{ code: 'NOT_FOUND', message: `the explorer is not built (no ${name} in its folder): run npm run build` }]),
      };
    }
    return { status: 200, headers: { ...common, 'content-type': type }, envelope: envelope(), body: listed([method === 'HEAD' ? '' : text]) };
  }

  /** The page and its files only: mounted at the root, the explorer must leave every other path to the host (next()). */
  function owns(path: string): boolean {
    const name = fileOf(path);
    return name === '' || (name !== undefined && Object.hasOwn(ASSETS, name));
  }

  return { owns, answer };
}
