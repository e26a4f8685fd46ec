/** `consolidata/http`: serve a DataStore over HTTP, as Fetch or node:http handlers. */
export { createFetchHandler } from './fetch.js';
export { createNodeHandler, type NodeHandler } from './node.js';
export { configureServer, type ServerLimits } from './server.js';
export { basicAuth, bearerAuth } from './auth.js';
export { statusOf, DEFAULT_BASE_PATH, DEFAULT_MAX_BODY_BYTES } from './route.js';
// The pool serves HTTP workloads (it streams answers to the adapter); its worker script ships beside this bundle in dist.
export { createPool, type PooledStore, type PoolOptions, type PoolStats, type RequestControl, type QueryStream } from '../server/pool.js';
export type { ChangesOptions } from '../dynamic.js';
export type { HttpOptions, Authenticate, AuthRequest, AuthResult, StoreLike, StoreInput } from './types.js';
