export { DataStore, type OpenOptions, type InsertOptions, type LoadOptions, type ReplaceOptions, type WriteOptions, type UpdateOptions, type WatchOptions, type ChangeEvent, type Version } from './store.js';
export { DynamicStore } from './dynamic.js';
export { unwrap, DataStoreError, ERROR_CODES, type Envelope, type EnvelopeError, type ErrorCode } from './envelope.js';
export {
  Catalogue,
  TYPES as catalogue,
  BASE_FIELDS,
  CATALOGUE_VERSION,
  DEFAULT_UNIQUE_KEYS,
  type BuiltinCatalogue,
  type CatalogueShape,
  type Doc,
  type DocInput,
  type TypeName,
  type FieldKinds,
  type CanonicalName,
  type GeoPoint,
  type GeoMultiPolygon,
} from './catalogue/index.js';
export type { Query, QueryOptions, FieldCondition, Operators, UpdateBody, SortPath, PolygonOperand, IterateOptions, FieldName } from './query/types.js';
export type { IndexSpec } from './settings.js';
export { sampleData, type SampleData, type SampleSizes } from './sample.js';
export { StoreBusyError } from './backend.js';
export { NotAStoreError } from './sqlite/connection.js';
