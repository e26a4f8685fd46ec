/**
 * The README's "Usage" example compiles as written against the sources: the ```ts block under "## Usage" is read
 * from README.md at test time and typechecked with the TypeScript compiler API, its `import … from 'consolidata'`
 * mapped to src/index.ts. A README edit that stops compiling, or a type change that breaks the example, fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root, typecheck } from './types.compile.js';

/** The first ```ts block under the "## Usage" heading, and the README line it starts on. */
function usageBlock(): { code: string; line: number } {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
  const heading = lines.findIndex((l) => l.trim() === '## Usage');
  if (heading < 0) throw new Error('README.md has no "## Usage" heading');
  for (let i = heading + 1; i < lines.length && !/^## /.test(lines[i]!); i++) {
    if (lines[i]!.trim() !== '```ts') continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    if (end < 0) throw new Error(`README.md: the \`\`\`ts block at line ${i + 1} is not closed`);
    return { code: lines.slice(i + 1, end).join('\n'), line: i + 2 };
  }
  throw new Error('README.md: no ```ts block under "## Usage"');
}

describe('README "Usage"', () => {
  const { code, line } = usageBlock();

  it('imports from consolidata and calls the typed store', () => {
    expect(code).toMatch(/from 'consolidata'/);
    expect(code).toMatch(/store\.query\(/);
  });

  it(`compiles as written (the block at README.md line ${line})`, () => {
    expect(typecheck(code)).toEqual([]);
  }, 60_000);

  it('is really typechecked: a mistake appended to the block is reported', () => {
    const errors = typecheck(`${code}\nawait store.query('Well', { basinNmae: 'Permian' });\n`);
    expect(errors.join('\n')).toMatch(/basinNmae/);
  }, 60_000);
});
