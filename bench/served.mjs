// Where a `consolidata serve` (or a bench server printing the same line) listens, once it says so on stdout.

/**
 * Resolves the base URL of the API (`http://host:port/api`) the child prints ("… at http://…/api"); rejects if it
 * exits first, with `detail()` (e.g. its stderr so far) in the message.
 * @example const base = await servedAt(spawn(process.execPath, [cli, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] }));
 */
export function servedAt(child, detail = () => '') {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /at (http:\/\/\S+\/api)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`${child.spawnargs.slice(1).join(' ')} exited ${code}\n${detail()}`.trim())));
  });
}
