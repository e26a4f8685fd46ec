/** `consolidata/http`: serve a DataStore over HTTP, as Fetch or node:http handlers. */
export { createFetchHandler } from './fetch.js';
export { createNodeHandler, type NodeHandler } from './node.js';
export { configureServer, type ServerLimits } from './server.js';
export { basicAuth, bearerAuth } from './auth.js';
export { statusOf, DEFAULT_BASE_PATH, DEFAULT_MAX_BODY_BYTES } from './route.js';
// The pool serves HTTP workloads (it streams answers to the adapter); its worker script ships beside this bundle in dist.
export { createPool, type PooledStore, type PoolOptions, type PoolStats, type RequestControl, type QueryStream } from '../pool/pool.js';
export type { ChangesOptions } from '../core/store.js';
export type { StoreLike, StoreInput } from '../core/store-like.js';
export type { SliceSize, TextSlices } from '../core/slices.js';
export type { HttpOptions, Authenticate, AuthRequest, AuthResult } from './types.js';
