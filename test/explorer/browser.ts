/**
 * What the explorer's browser tests share: a fresh build of the page, a served sample store, and Debian's Chromium
 * driven by playwright-core. No browser is downloaded: a missing Chromium fails the suite, saying how to install it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildExplorer } from '../../scripts/build-explorer.mjs';
import { serve, type Running, type ServeOptions } from '../../src/cli/serve.js';
import { root, workerScript } from '../pool/helpers.js';

/** Chromium's binary: CHROMIUM_PATH, else Debian's package (`apt-get install chromium`, as .ci/run does). */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Launches headless Chromium, or throws naming the missing binary and how to install it. Suites call it from their
 * tests (through `browserOnce`), not from beforeAll: a failing hook would report its tests as skipped, not failed.
 */
export async function launch(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(`the explorer's browser tests need Chromium at ${chromiumPath}: apt-get install -y --no-install-recommends chromium (or set CHROMIUM_PATH)`);
  }
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
}

/** One browser per test file, launched by the first test that needs it; every test fails while it cannot launch. */
export function browserOnce(): { get: () => Promise<Browser>; close: () => Promise<void> } {
  let launched: Promise<Browser> | undefined;
  return {
    get: () => (launched ??= launch()),
    close: async () => {
      await (await launched?.catch(() => undefined))?.close();
    },
  };
}

/** Builds the explorer from the current sources into a fresh folder (removed by `remove`). */
export async function buildPage(): Promise<{ dir: string; remove: () => void }> {
  const base = join(root, 'node_modules/.cache');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'consolidata-explorer-'));
  await buildExplorer(dir);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `consolidata serve` on port 0 over a fresh SQLite file, with the explorer built from the sources. */
export async function serveWith(dir: string, explorerDir: string, options: Partial<ServeOptions> = {}): Promise<Running & { origin: string }> {
  const running = await serve({ db: join(dir, 'explorer.db'), port: 0, host: '127.0.0.1', log: () => undefined, workerScript: await workerScript(), explorerDir, ...options });
  return { ...running, origin: running.url.replace(/\/api$/, '') };
}

/** A page that records every console error and uncaught exception, so a test can assert there were none. */
export async function openPage(context: BrowserContext): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { page, errors };
}
