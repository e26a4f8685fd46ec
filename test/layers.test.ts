/** The layers as designed: a request flows route → store → parse → compile → SQLite, and no layer imports one above it. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every module of src a file imports, as a path relative to src without extension (`catalogue/dates`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"](\.[^'"]+)['"]/gm)].map((m) =>
    relative(SRC, resolve(dirname(file), m[1]!)).replace(/\.js$/, ''),
  );
}

/** What each layer may import besides itself; base modules import nothing of src. */
const ALLOWED: Record<string, readonly string[]> = {
  limits: [],
  envelope: [],
  cache: [],
  ids: [],
  geo: ['cache'],
  catalogue: ['geo', 'limits', 'envelope'],
  settings: ['catalogue', 'ids', 'version'],
  query: ['catalogue', 'geo', 'limits', 'envelope', 'cache'],
  backend: ['catalogue', 'envelope', 'query'],
  sql: ['catalogue', 'geo', 'limits', 'envelope', 'query', 'backend'],
  sqlite: ['catalogue', 'geo', 'limits', 'envelope', 'query', 'backend', 'settings', 'sql', 'cache'],
  // The engines share only sql/; index.ts is the package entry that opens a store on the PostgreSQL backend.
  postgres: ['catalogue', 'geo', 'limits', 'envelope', 'query', 'backend', 'settings', 'sql', 'cache', 'dynamic', 'store'],
};

const layerOf = (module: string) => module.split('/')[0]!;

describe('layers', () => {
  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    it(`${layer} imports only ${allowed.length ? allowed.join(', ') : 'nothing of src'}`, () => {
      const mine = files(SRC).filter((f) => layerOf(relative(SRC, f).replace(/\.ts$/, '')) === layer);
      expect(mine.length).toBeGreaterThan(0);
      const bad = mine.flatMap((f) =>
        importsOf(f)
          .filter((m) => layerOf(m) !== layer && !allowed.includes(layerOf(m)))
          .map((m) => `${relative(SRC, f)} imports ${m}`),
      );
      expect(bad).toEqual([]);
    });
  }
});
