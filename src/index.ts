export { DataStore, SqliteDataStore, DynamicStore, SqliteDynamicStore, type SqliteMembers, type OpenOptions, type InsertOptions, type LoadOptions, type ReplaceOptions, type WriteOptions, type UpdateOptions, type WatchOptions, type ChangeEvent, type Version, type DocumentCacheStats } from './store.js';
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
  type BuiltinDocuments,
  // The named document interface of every built-in type (`Doc<'Well'>` is `Well`).
  type WorkspaceDefinition, type DailyProduction, type MonthlyProduction, type Well, type Setting, type Schedule,
  type Annotation, type Link, type Plugin, type WellStat, type JobResult, type CronJob, type WellIdentifier,
  type DeclineCurveAnalysisModel, type VersionDocument, type Job, type Notification, type AppSetting,
  type TypeCurveGenerator, type EconomicsProject, type Petron, type AnnotationTag, type RealTimeProduction,
  type ActivityLog, type UnitsDefinition, type Comment,
} from './catalogue/index.js';
export type { Query, QueryOptions, FieldCondition, Operators, UpdateBody, SortPath, PolygonOperand, IterateOptions, FieldName, Projected } from './query/types.js';
export type { AggregateOptions, AggregateRow, GroupKey, MetricSpec, NumericField, OrderedField } from './query/aggregate-types.js';
export type { Interval } from './query/aggregate.js';
export type { IndexSpec } from './settings.js';
export { sampleData, type SampleData, type SampleSizes } from './sample.js';
export { StoreBusyError } from './backend.js';
export { NotAStoreError } from './sqlite/index.js';
