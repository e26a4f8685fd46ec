/**
 * Declaration bundling for the published entries, run by tsup.config.ts after the JS build.
 *
 * Why not tsup's own `dts`: tsup marks every package in `dependencies` as external in its declaration
 * build, and its `dts.resolve` only inlines packages that are *not* dependencies (egoist/tsup#399, #1007).
 * `better-sqlite3` is a runtime dependency whose types live in `@types/better-sqlite3`, a devDependency
 * of ours that a consumer does not have; `DataStore#database` is typed with them, so tsup's output
 * said `import Database from 'better-sqlite3'` and failed with TS7016 in a consumer with
 * `skipLibCheck: false`. Here rollup-plugin-dts inlines the listed type packages (`includeExternal`)
 * and leaves every other package import (node:* only, today) as an import.
 *
 * Each entry gives `<name>.d.ts` (for `import`) and `<name>.d.cts` (for `require`, and for node10 through
 * `typesVersions`); declarations shared by several entries go to a chunk `<name>-<hash>.d.{ts,cts}`.
 */
import { builtinModules } from 'node:module';
import { rollup, type RollupLog } from 'rollup';
import { dts } from 'rollup-plugin-dts';

/** `node:http`, `fs`…: ambient modules of @types/node, which a consumer is assumed to have. */
const isBuiltin = (id: string): boolean => id.startsWith('node:') || builtinModules.includes(id);

export interface BundleDtsOptions {
  /** Output name → source file, as tsup's `entry`. */
  entry: Record<string, string>;
  /** Output directory (tsup's `outDir`). */
  outDir: string;
  /** Type packages (as installed: `@types/x` or a package shipping its own types) to inline, not import. */
  inline: readonly string[];
  /** tsconfig for the declaration emit (default ./tsconfig.json). */
  tsconfig?: string;
}

export async function bundleDts(options: BundleDtsOptions): Promise<void> {
  const warnings: string[] = [];
  const bundle = await rollup({
    input: options.entry,
    external: isBuiltin,
    plugins: [
      dts({
        tsconfig: options.tsconfig ?? 'tsconfig.json',
        includeExternal: [...options.inline],
        // The repo tsconfig is for checking (noEmit, tests and benches included); emit only what the entries reach.
        compilerOptions: { noEmit: false, declaration: true, emitDeclarationOnly: true, noEmitOnError: true },
      }),
    ],
    onLog(level, log: RollupLog) {
      if (level === 'warn') warnings.push(log.message);
    },
  });
  try {
    await Promise.all([
      bundle.write({ dir: options.outDir, entryFileNames: '[name].d.ts', chunkFileNames: '[name]-[hash].d.ts' }),
      bundle.write({ dir: options.outDir, entryFileNames: '[name].d.cts', chunkFileNames: '[name]-[hash].d.cts' }),
    ]);
  } finally {
    await bundle.close();
  }
  // An unresolved import or a circular re-export in declarations is a broken .d.ts, not a detail.
  if (warnings.length > 0) throw new Error(`declaration bundle has warnings:\n${warnings.join('\n')}`);
}
