/**
 * The README's shell blocks run as written: every ```sh block holding curl lines is run top to bottom against
 * `consolidata serve` (the CLI built from the sources) in a fresh folder, with bash and curl, and each curl
 * line's trailing comment is checked against the answer. The first block (Routes) runs on what `npm start`
 * serves, the sample data included:
 *
 *   # 200                                   the HTTP status (required, first)
 *   # 409 DUPLICATE_KEY, count 1            error codes the answer's `errors` hold; envelope fields
 *   # 200, data[0].basinName "Delaware"     a value (JSON) at a path of the envelope
 *   # 200, data includes "Well"             an element (JSON) of the array at a path
 *
 * Parts are separated by ", " (JSON values are written without spaces after their commas). Directives in a block:
 * `# server: consolidata serve ARGS` starts a fresh server (ARGS must name `--db`; files relative to a fresh
 * folder), `# NAME.json: JSON` writes a file there first; a block without a server directive continues on the
 * previous block's server. Other lines (`B=…`) are shell set-up, kept for later blocks, with 127.0.0.1:8080
 * pointed at the test's server.
 */
import { ERROR_CODES } from '../src/envelope.js';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleSummary } from '../src/cli/serve.js';
import { sampleData } from '../src/sample.js';
import { buildCli, root, runCli, startServe, type Served } from './cli/build.js';

const readme = readFileSync(join(root, 'README.md'), 'utf8');

interface Block {
  /** 1-based line of the block's first line in README.md. */
  at: number;
  lines: { n: number; text: string }[];
}

function shellBlocks(): Block[] {
  const out: Block[] = [];
  const lines = readme.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```sh') continue;
    const block: Block = { at: i + 2, lines: [] };
    for (i++; i < lines.length && lines[i]!.trim() !== '```'; i++) block.lines.push({ n: i + 1, text: lines[i]! });
    if (block.lines.some((l) => /^curl\s/.test(l.text))) out.push(block);
  }
  return out;
}

type Check = (status: number, body: Record<string, unknown>) => string | undefined;

const PATH = /^[A-Za-z_]\w*(?:\.\w+|\[\d+\])*$/;

function at(value: unknown, path: string): unknown {
  for (const step of path.match(/\w+|\[\d+\]/g)!) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[step.startsWith('[') ? step.slice(1, -1) : step];
  }
  return value;
}

function json(text: string, part: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`expected outcome "${part}": ${text} is not JSON`);
  }
}

/** The checks a curl line's comment states; throws on a comment this test cannot check. */
function expectations(comment: string): Check[] {
  const [head, ...rest] = comment.split(/,\s+/);
  const first = /^(\d{3})((?:\s+[A-Z][A-Z_]+)*)$/.exec(head!.trim());
  if (!first) throw new Error(`expected outcome must start with the HTTP status (then error codes): "${head}"`);
  const status = Number(first[1]);
  const checks: Check[] = [(s) => (s === status ? undefined : `status ${s}, not ${status}`)];
  const code = (c: string): Check => (_s, body) =>
    ((body.errors as { code: string }[] | undefined) ?? []).some((e) => e.code === c) ? undefined : `no ${c} in errors`;
  for (const c of first[2]!.trim().split(/\s+/).filter(Boolean)) checks.push(code(c));
  for (const raw of rest) {
    const part = raw.trim();
    if (/^[A-Z][A-Z_]+$/.test(part)) {
      checks.push(code(part));
      continue;
    }
    const m = /^(\S+)\s+(?:(includes)\s+)?(.+)$/.exec(part);
    if (!m || !PATH.test(m[1]!)) throw new Error(`cannot check the expected outcome "${part}"`);
    const [, path, includes, text] = m;
    const want = json(text!, part);
    checks.push((_s, body) => {
      const got = at(body, path!);
      if (includes) return Array.isArray(got) && got.some((x) => isDeepStrictEqual(x, want)) ? undefined : `${path} does not include ${text}`;
      return isDeepStrictEqual(got, want) ? undefined : `${path} is ${JSON.stringify(got)}, not ${text}`;
    });
  }
  return checks;
}

function bash(script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile('bash', ['-c', script], { env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('README', () => {
  let cli: Awaited<ReturnType<typeof buildCli>>;
  const dirs: string[] = [];
  const servers: Served[] = [];

  beforeAll(async () => {
    const missing = ['bash', 'curl'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
    if (missing.length) throw new Error(`test/readme.test.ts runs the README's curl examples and needs ${missing.join(' and ')} on PATH`);
    cli = await buildCli();
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    cli?.remove();
  });

  it('the Envelope section lists every error code an answer can carry, and no other', () => {
    const listed = /Errors are `\{[^`]*\}` with `code` one\s+of `([A-Z_\s]+)`/.exec(readme)?.[1]?.split(/\s+/).filter(Boolean);
    expect(listed).toEqual([...ERROR_CODES]);
  });

  it('curl blocks answer as their comments say, run top to bottom, the first on what npm start serves', async () => {
    const blocks = shellBlocks();
    expect(blocks.length, 'the README has its Routes and Authentication curl blocks').toBeGreaterThanOrEqual(3);
    // The Quick start sends readers from `npm start` to these blocks: the first must run on that server, sample and all.
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
    const started = /\bserve\s+(.*)$/.exec(scripts.start)![1]!;
    expect(blocks[0]!.lines.find((l) => l.text.startsWith('# server:'))?.text).toBe(`# server: consolidata serve ${started}`);
    const body = join(mkdtempSync(join(tmpdir(), 'consolidata-readme-')), 'body.json');
    dirs.push(join(body, '..'));
    const setup: string[] = [];
    let server: Served | undefined;
    let ran = 0;
    for (const block of blocks) {
      const serverLine = block.lines.find((l) => l.text.startsWith('# server:'));
      if (serverLine) {
        const m = /^# server: consolidata serve\s+(.*)$/.exec(serverLine.text);
        expect(m, `README.md:${serverLine.n}: "# server: consolidata serve ARGS"`).not.toBeNull();
        const args = m![1]!.trim().split(/\s+/);
        expect(args, `README.md:${serverLine.n}: the server names its --db`).toContain('--db');
        const dir = mkdtempSync(join(tmpdir(), 'consolidata-readme-'));
        dirs.push(dir);
        for (const l of block.lines) {
          const file = /^# ([\w.-]+\.json): (.*)$/.exec(l.text);
          if (file) writeFileSync(join(dir, file[1]!), JSON.stringify(json(file[2]!, l.text)));
        }
        server = await startServe(cli.path, [...args, '--port', '0'], dir);
        servers.push(server);
      }
      expect(server, `README.md:${block.at}: the first curl block names its server ("# server: consolidata serve …")`).toBeDefined();
      const hostPort = new URL(server!.url).host;
      for (const { n, text } of block.lines) {
        const where = `README.md:${n}: ${text}`;
        if (text.trim() === '' || text.startsWith('#')) continue;
        if (!/^curl\s/.test(text)) {
          setup.push(text);
          continue;
        }
        expect(text, `${where}\nno placeholders: use ids the earlier lines create`).not.toMatch(/<[^>]*>/);
        const comment = /\s#\s+(\d{3}\b[^#]*)$/.exec(text);
        expect(comment, `${where}\nevery curl line ends with its expected outcome, e.g. "# 200, count 1"`).not.toBeNull();
        let checks: Check[];
        try {
          checks = expectations(comment![1]!.trim());
        } catch (e) {
          throw new Error(`${where}\n${(e as Error).message}`);
        }
        const prelude = setup.join('\n');
        expect(prelude, 'the set-up lines point at 127.0.0.1:8080 (the test points them at its server)').toContain('127.0.0.1:8080');
        const script = [
          'set -u',
          // Each curl answers its status on stdout and leaves the body in $BODY.
          'curl() { command curl -sS -o "$BODY" -w "%{http_code}" "$@"; }',
          prelude.replaceAll('127.0.0.1:8080', hostPort),
          text,
        ].join('\n');
        writeFileSync(body, '');
        const r = await bash(script, { BODY: body });
        expect(r.code, `${where}\n${r.stderr}`).toBe(0);
        const status = Number(r.stdout.trim());
        const answer = readFileSync(body, 'utf8');
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(answer) as Record<string, unknown>;
        } catch {
          throw new Error(`${where}\nanswered ${status} with a body that is not JSON: ${answer.slice(0, 200)}`);
        }
        const failures = checks.map((c) => c(status, parsed)).filter(Boolean);
        expect(failures, `${where}\nanswered ${status}: ${answer.slice(0, 600)}`).toEqual([]);
        ran++;
      }
    }
    expect(ran).toBeGreaterThanOrEqual(20);
  });

  it('the CLI synopsis names every command and option the CLI has', async () => {
    const cliSection = readme.slice(readme.indexOf('## CLI\n'), readme.indexOf('\n## ', readme.indexOf('## CLI\n') + 1));
    const synopsis = /```sh\n([^]*?)```/.exec(cliSection)![1]!;
    for (const command of ['', 'serve', 'import', 'export']) {
      const help = await runCli(cli.path, [...(command ? [command] : []), '--help'], root);
      expect(help.code).toBe(0);
      const options = [...help.stdout.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1]!).filter((o) => o !== '--help');
      expect(options.length).toBeGreaterThan(0);
      const line = synopsis.split('\n').find((l) => l.startsWith(`consolidata ${command || '--'}`));
      expect(line, `the CLI synopsis has a "consolidata ${command}" line`).toBeDefined();
      for (const option of options) expect(line, `"consolidata ${command}" in the README's CLI synopsis names ${option}`).toContain(option);
      if (command) expect(cliSection, `the README's CLI section explains ${command}`).toContain(`**${command}**`);
    }
  });

  it('scopes the Fastify example to a plugin, so other routes keep their body parsing', () => {
    const at = readme.indexOf('Fastify —');
    const block = /```ts\n([^]*?)```/.exec(readme.slice(at))![1]!;
    const plugin = /fastify\.register\(async \((\w+)\) => \{([^]*)\}\);/.exec(block);
    expect(plugin, block).not.toBeNull();
    const [, app, body] = plugin!;
    for (const call of ['removeAllContentTypeParsers(', "addContentTypeParser('*'", "all('/api/*'"]) {
      expect(body, `${call} runs on the plugin's instance`).toContain(`${app}.${call}`);
      expect(block.replace(body!, ''), `${call} never on the root instance`).not.toContain(call);
    }
  });

  it('states the sample size exactly as `serve --sample` prints it', () => {
    const { Well: wells, DailyProduction: daily } = sampleData();
    const printed = sampleSummary([
      { type: 'Well', count: wells.length },
      { type: 'DailyProduction', count: daily.length },
    ]);
    const prose = readme.replace(/\s+/g, ' ');
    const serve = prose.slice(prose.indexOf('- **serve**'), prose.indexOf('- **import**'));
    expect(serve).toContain(`loaded ${printed}`);
    // The serve bullet names no other count of documents.
    const counts = [...serve.matchAll(/([\d,]+) (?:sample )?documents/g)].map((m) => m[1]);
    expect(counts).toEqual([printed.split(' ')[0]]);
  });
});
