/**
 * The TS types of documents, derived from the catalogue: as written (`DocInput`) and as read back (`Doc`), with a
 * named interface per built-in type so that editors and errors print `Well`, not the fields of a mapped type; and
 * `deepFreeze`, for documents many readers share.
 */
import type { KindInput, KindValue } from './kinds.js';
import type { BuiltinCatalogue, CatalogueShape, CanonicalName, FieldKinds, TypeName } from './index.js';

/** One object type from an intersection, so that the compiler prints and compares it as one. */
type Flat<T> = { [K in keyof T]: T[K] };

/**
 * A stored document of type T of catalogue C, derived field by field from the catalogue: `id` always there (every
 * stored document has one), every other field optional and nullable. `Doc` is this for a catalogue of your own; the
 * built-in types' named interfaces extend it.
 */
export type DerivedDoc<T extends TypeName<C>, C extends CatalogueShape = BuiltinCatalogue> = Flat<
  { id: string } & { -readonly [K in Exclude<keyof FieldKinds<T, C>, 'id'>]?: KindValue<FieldKinds<T, C>[K] & string> | null }
>;

/** A built-in type's document as read back, for the named interfaces below. */
type Builtin<T extends keyof BuiltinCatalogue> = DerivedDoc<T, BuiltinCatalogue>;

/** A `WorkspaceDefinition` document as read back: `id` always, every other field optional. */
export interface WorkspaceDefinition extends Builtin<'WorkspaceDefinition'> {}
/** A `DailyProduction` document as read back: `id` always, every other field optional. */
export interface DailyProduction extends Builtin<'DailyProduction'> {}
/** A `MonthlyProduction` document as read back: `id` always, every other field optional. */
export interface MonthlyProduction extends Builtin<'MonthlyProduction'> {}
/** A `Well` document as read back: `id` always, every other field optional. */
export interface Well extends Builtin<'Well'> {}
/** A `Setting` document as read back: `id` always, every other field optional. */
export interface Setting extends Builtin<'Setting'> {}
/** A `Schedule` document as read back: `id` always, every other field optional. */
export interface Schedule extends Builtin<'Schedule'> {}
/** A `Annotation` document as read back: `id` always, every other field optional. */
export interface Annotation extends Builtin<'Annotation'> {}
/** A `Link` document as read back: `id` always, every other field optional. */
export interface Link extends Builtin<'Link'> {}
/** A `Plugin` document as read back: `id` always, every other field optional. */
export interface Plugin extends Builtin<'Plugin'> {}
/** A `WellStat` document as read back: `id` always, every other field optional. */
export interface WellStat extends Builtin<'WellStat'> {}
/** A `JobResult` document as read back: `id` always, every other field optional. */
export interface JobResult extends Builtin<'JobResult'> {}
/** A `CronJob` document as read back: `id` always, every other field optional. */
export interface CronJob extends Builtin<'CronJob'> {}
/** A `WellIdentifier` document as read back: `id` always, every other field optional. */
export interface WellIdentifier extends Builtin<'WellIdentifier'> {}
/** A `DeclineCurveAnalysisModel` document as read back: `id` always, every other field optional. */
export interface DeclineCurveAnalysisModel extends Builtin<'DeclineCurveAnalysisModel'> {}
/** A `VersionDocument` document as read back: `id` always, every other field optional. */
export interface VersionDocument extends Builtin<'VersionDocument'> {}
/** A `Job` document as read back: `id` always, every other field optional. */
export interface Job extends Builtin<'Job'> {}
/** A `Notification` document as read back: `id` always, every other field optional. */
export interface Notification extends Builtin<'Notification'> {}
/** A `AppSetting` document as read back: `id` always, every other field optional. */
export interface AppSetting extends Builtin<'AppSetting'> {}
/** A `TypeCurveGenerator` document as read back: `id` always, every other field optional. */
export interface TypeCurveGenerator extends Builtin<'TypeCurveGenerator'> {}
/** A `EconomicsProject` document as read back: `id` always, every other field optional. */
export interface EconomicsProject extends Builtin<'EconomicsProject'> {}
/** A `Petron` document as read back: `id` always, every other field optional. */
export interface Petron extends Builtin<'Petron'> {}
/** A `AnnotationTag` document as read back: `id` always, every other field optional. */
export interface AnnotationTag extends Builtin<'AnnotationTag'> {}
/** A `RealTimeProduction` document as read back: `id` always, every other field optional. */
export interface RealTimeProduction extends Builtin<'RealTimeProduction'> {}
/** A `ActivityLog` document as read back: `id` always, every other field optional. */
export interface ActivityLog extends Builtin<'ActivityLog'> {}
/** A `UnitsDefinition` document as read back: `id` always, every other field optional. */
export interface UnitsDefinition extends Builtin<'UnitsDefinition'> {}
/** A `Comment` document as read back: `id` always, every other field optional. */
export interface Comment extends Builtin<'Comment'> {}

/** The named interface of every built-in type, by type name. */
export interface BuiltinDocuments {
  WorkspaceDefinition: WorkspaceDefinition;
  DailyProduction: DailyProduction;
  MonthlyProduction: MonthlyProduction;
  Well: Well;
  Setting: Setting;
  Schedule: Schedule;
  Annotation: Annotation;
  Link: Link;
  Plugin: Plugin;
  WellStat: WellStat;
  JobResult: JobResult;
  CronJob: CronJob;
  WellIdentifier: WellIdentifier;
  DeclineCurveAnalysisModel: DeclineCurveAnalysisModel;
  VersionDocument: VersionDocument;
  Job: Job;
  Notification: Notification;
  AppSetting: AppSetting;
  TypeCurveGenerator: TypeCurveGenerator;
  EconomicsProject: EconomicsProject;
  Petron: Petron;
  AnnotationTag: AnnotationTag;
  RealTimeProduction: RealTimeProduction;
  ActivityLog: ActivityLog;
  UnitsDefinition: UnitsDefinition;
  Comment: Comment;
}

/** Every type of the built-in catalogue with its interface: indexing fails to compile for a type that has none. */
type Named = { [T in keyof BuiltinCatalogue]: BuiltinDocuments[T] };

/** True when C is the built-in catalogue (or one of the very same shape), whose types have named interfaces. */
type IsBuiltin<C extends CatalogueShape> = [C] extends [BuiltinCatalogue] ? ([BuiltinCatalogue] extends [C] ? true : false) : false;

/**
 * A stored document of type T, as read back: `id` is always a string, every other field optional and nullable. For
 * the built-in catalogue it is the type's named interface (`Doc<'Well'>` is `Well`).
 * @example const w: Doc<'Well'> = (await store.query('Well', { pwi: 'W1' })).data[0]!;
 */
export type Doc<T extends TypeName<C>, C extends CatalogueShape = BuiltinCatalogue> =
  IsBuiltin<C> extends true ? Named[CanonicalName<T, C> & keyof Named] : DerivedDoc<T, C>;

/**
 * A document of type T as accepted on write: every field optional, `id` too (a new document gets one), and DateTime
 * fields may be `Date` objects.
 * @example const w: DocInput<'Well'> = { pwi: 'W1', spudDate: new Date() };
 */
export type DocInput<T extends TypeName<C>, C extends CatalogueShape = BuiltinCatalogue> = {
  -readonly [K in keyof FieldKinds<T, C>]?: KindInput<FieldKinds<T, C>[K] & string> | null;
};

/**
 * Freezes a parsed JSON value and everything in it, for documents many readers share (the document cache's answers,
 * the sample fixtures): none may change them.
 * @example deepFreeze(JSON.parse(text))
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
