// The HTTP floor: a minimal hand-written node:http + better-sqlite3 server answering the two requests bench/floor.mjs
// sends (an indexed pwi equality, and the first 50-document page of Wells) with the bodies `consolidata serve`
// answers, built by hand from the rows' JSON text. One thread, statements prepared once: what the store is held to.
// Usage: node bench/floor-server.mjs <database file>   (prints "serving at http://127.0.0.1:<port>/api")
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import Database from 'better-sqlite3';

const db = new Database(process.argv[2], { readonly: true });
const PWI = `json_extract(doc, '$."pwi"')`;
const eq = db.prepare(`SELECT json(doc) FROM "docs_Well" WHERE ${PWI} = ?`).pluck();
const page = db.prepare(`SELECT seq, json(doc) AS d FROM "docs_Well" ORDER BY seq LIMIT ?`);
const count = db.prepare(`SELECT count(*) FROM "docs_Well"`).pluck();
const key = randomBytes(32);

const TAIL = '"activityId":null,"success":true,"message":"","errors":[],"issues":[],"hasErrors":false,"insertedIds":[],"idsNotFound":[],"updatedIds":[],"deletedIds":[],"referencesRemoved":[],"referencesUpdated":[],"referencesInserted":[]}';
const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/** A signed position after the last row, as a keyset cursor is: the payload and its HMAC, base64url. */
function cursor(seq, total) {
  const payload = Buffer.from(JSON.stringify({ v: 1, h: 'floor', r: 0, k: null, s: seq, t: total })).toString('base64url');
  return `${payload}.${createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url')}`;
}

function answer(body) {
  const { query = {}, options = {} } = JSON.parse(body);
  if (typeof query.pwi === 'string') {
    const rows = eq.all(query.pwi);
    return `{"data":[${rows.join(',')}],"cursor":null,"hasCursor":false,"empty":${rows.length === 0},"count":${rows.length},"total":${rows.length},${TAIL}`;
  }
  const rows = page.all(options.limit);
  const total = count.get();
  const more = rows.length < total;
  const next = more ? `"${cursor(rows.at(-1).seq, total)}"` : 'null';
  return `{"data":[${rows.map((r) => r.d).join(',')}],"cursor":${next},"hasCursor":${more},"empty":${rows.length === 0},"count":${rows.length},"total":${total},${TAIL}`;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const text = answer(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(200, { ...HEADERS, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`serving at http://127.0.0.1:${server.address().port}/api\n`));
