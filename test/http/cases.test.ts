import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { DataStore } from '../../src/index.js';
import { createFetchHandler, createNodeHandler, type NodeHandler } from '../../src/http/index.js';
import { backends, type StoreBackend } from '../helpers/backends.js';
import { CASES, checkReply, requestInit, seededStore, type Reply } from './cases.js';

let server: Server;
let origin: string;
let current: NodeHandler | undefined;
const open: DataStore[] = [];

beforeAll(async () => {
  server = createServer((req, res) => current!(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  for (const s of open) await s.close();
});

async function fresh(backend: StoreBackend): Promise<DataStore> {
  // The store of the previous case is closed first, so a backend may reuse what it held.
  await open.pop()?.close();
  const store = await seededStore(backend);
  open.push(store);
  return store;
}

async function toReply(res: Response): Promise<Reply> {
  return { status: res.status, headers: res.headers, env: await res.json() };
}

describe.each(backends())('$name', (backend) => {
describe('HTTP cases over a socket (node handler)', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const store = await fresh(backend);
      current = createNodeHandler(store, c.options);
      const reply = await toReply(await fetch(origin + c.path, requestInit(c)));
      checkReply(c, reply);
      await c.check?.(reply, store);
    });
  }
});

describe('HTTP cases through the Fetch handler', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const store = await fresh(backend);
      const handle = createFetchHandler(store, c.options);
      const reply = await toReply(await handle(new Request(`http://localhost${c.path}`, requestInit(c))));
      checkReply(c, reply);
      await c.check?.(reply, store);
    });
  }
});
});
