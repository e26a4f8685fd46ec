/** The layers as designed: a request flows route → store → parse → compile → SQLite, and no layer imports one above it. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every module of src a file imports, statically or with `import()`, as a path relative to src without extension (`catalogue/dates`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const from = [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"](\.[^'"]+)['"]/gm), ...text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)];
  return from.map((m) => relative(SRC, resolve(dirname(file), m[1]!)).replace(/\.js$/, '')).filter((m) => !m.startsWith('..'));
}

/** The engines: their modules are imported only by themselves, and by the others through their entry alone. */
const ENGINES = ['sqlite', 'postgres'];
const ENTRIES = ['sqlite/index', 'postgres/index'];

/**
 * What each layer may import besides itself; base modules import nothing of src. An entry is a layer (a folder or a
 * top-level file) or one module (`sqlite/index`, an engine's entry).
 */
const ALLOWED: Record<string, readonly string[]> = {
  limits: [],
  envelope: [],
  cache: [],
  ids: [],
  version: [],
  sample: ['catalogue', 'ids'],
  geo: ['cache'],
  catalogue: ['geo', 'limits', 'envelope'],
  settings: ['catalogue', 'ids', 'version'],
  query: ['catalogue', 'geo', 'limits', 'envelope', 'cache'],
  backend: ['catalogue', 'envelope', 'query'],
  sql: ['catalogue', 'geo', 'limits', 'envelope', 'query', 'backend'],
  // The store's operations over any backend: no engine, no adapter.
  core: ['catalogue', 'limits', 'envelope', 'query', 'settings', 'backend'],
  sqlite: ['catalogue', 'geo', 'limits', 'envelope', 'query', 'backend', 'settings', 'sql', 'cache'],
  // The engines share only sql/; index.ts is the package entry that opens a store on the PostgreSQL backend.
  postgres: ['catalogue', 'geo', 'limits', 'envelope', 'query', 'backend', 'settings', 'sql', 'cache', 'store'],
  // The package entries (store.ts, index.ts, testing.ts): the public classes, wiring SQLite through its entry.
  store: ['catalogue', 'envelope', 'query', 'settings', 'backend', 'core', 'sqlite/index', 'sample'],
  // The worker pool serves one SQLite file: it opens its stores as users do, and estimates through the SQLite entry.
  pool: ['catalogue', 'limits', 'envelope', 'query', 'settings', 'backend', 'core', 'store', 'sqlite/index'],
  http: ['catalogue', 'limits', 'envelope', 'version', 'core', 'pool'],
  cli: ['catalogue', 'limits', 'envelope', 'settings', 'version', 'sample', 'core', 'store', 'http', 'pool', 'postgres/index'],
};

/** The package entries are one layer, `store`. */
const ENTRY_FILES: Record<string, string> = { index: 'store', testing: 'store' };

const layerOf = (module: string) => {
  const top = module.split('/')[0]!;
  return ENTRY_FILES[top] ?? top;
};

const mayImport = (layer: string, module: string) => {
  const allowed = ALLOWED[layer]!;
  return layerOf(module) === layer || allowed.includes(module) || allowed.includes(layerOf(module));
};

describe('layers', () => {
  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    it(`${layer} imports only ${allowed.length ? allowed.join(', ') : 'nothing of src'}`, () => {
      const mine = files(SRC).filter((f) => layerOf(relative(SRC, f).replace(/\.ts$/, '')) === layer);
      expect(mine.length).toBeGreaterThan(0);
      const bad = mine.flatMap((f) =>
        importsOf(f)
          .filter((m) => !mayImport(layer, m))
          .map((m) => `${relative(SRC, f)} imports ${m}`),
      );
      expect(bad).toEqual([]);
    });
  }

  it('an engine is reached from outside only through its entry (src/sqlite/index.ts, src/postgres/index.ts)', () => {
    const bad = files(SRC).flatMap((f) => {
      const layer = layerOf(relative(SRC, f).replace(/\.ts$/, ''));
      return importsOf(f)
        .filter((m) => ENGINES.includes(layerOf(m)) && layerOf(m) !== layer && !ENTRIES.includes(m))
        .map((m) => `${relative(SRC, f)} imports ${m}`);
    });
    expect(bad).toEqual([]);
  });

  it('every module of src is in a layer the rules name (the explorer is a browser app, built apart)', () => {
    const unknown = files(SRC)
      .map((f) => relative(SRC, f).replace(/\.ts$/, ''))
      .filter((m) => !ALLOWED[layerOf(m)] && layerOf(m) !== 'explorer');
    expect(unknown).toEqual([]);
  });
});
