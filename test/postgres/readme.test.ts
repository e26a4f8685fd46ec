/**
 * The README's PostgreSQL example (under "### PostgreSQL (`consolidata/postgres`)") compiles as written against the
 * sources, its `consolidata/postgres` import mapped to src/postgres/index.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root, typecheck } from '../types.compile.js';

function example(): string {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
  const heading = lines.findIndex((l) => l.trim() === '### PostgreSQL (`consolidata/postgres`)');
  if (heading < 0) throw new Error('README.md has no "### PostgreSQL (`consolidata/postgres`)" heading');
  const start = lines.findIndex((l, i) => i > heading && l.trim() === '```ts');
  const end = lines.findIndex((l, i) => i > start && l.trim() === '```');
  if (start < 0 || end < 0) throw new Error('README.md: no closed ```ts block under the PostgreSQL heading');
  // The typechecked file sits in test/: the entry's sources are one folder up.
  return lines.slice(start + 1, end).join('\n').replaceAll(`'consolidata/postgres'`, `'../src/postgres/index.js'`);
}

describe('README "Scaling out"', () => {
  it('the openPostgres example compiles as written', () => {
    const code = example();
    expect(code).toMatch(/openPostgres\(/);
    expect(typecheck(code)).toEqual([]);
  }, 60_000);

  it('is really typechecked: a mistake appended to it is reported', () => {
    expect(typecheck(`${example()}\nawait store.query('Well', { basinNmae: 'Permian' });\n`).join('\n')).toMatch(/basinNmae/);
  }, 60_000);
});
