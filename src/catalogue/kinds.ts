/** Wire kinds: what each kind name of the spec means, as TS types and as checks. */

export const QUANTITY_KINDS = [
  'Pressure', 'Temperature', 'GasRate', 'GasVolume', 'LiquidRate', 'LiquidVolume',
  'BoeRate', 'BoeVolume', 'Length', 'Mass', 'Volume',
] as const;

export const ENUM_KINDS = [
  'AnnotationType', 'ScheduleStatus', 'JobStatus', 'IdentifierTypes', 'ModelWorkflowState',
  'NotificationType', 'NotificationStatus', 'ApprovalStatus', 'ActivityMethod', 'RunLocation',
] as const;

/** How a kind's values are stored and compared. */
export type Category =
  | 'string' | 'boolean' | 'int32' | 'int64' | 'number' | 'date' | 'duration'
  | 'any' | 'dict' | 'array' | 'set' | 'geopoint' | 'geomultipolygon' | 'enum' | 'nested';

const BASE_CATEGORIES: Record<string, Category> = {
  String: 'string', Boolean: 'boolean', Int32: 'int32', Int64: 'int64', Double: 'number',
  Single: 'number', DateTime: 'date', Duration: 'duration', Object: 'any', Dictionary: 'dict',
  IDictionary: 'dict', ICollection: 'array', List: 'array', HashSet: 'set',
  GeoPoint: 'geopoint', GeoMultiPolygon: 'geomultipolygon',
};

/** Category of a wire kind; names ending in `Unit` are the unit enumerations, any other unknown name is a nested type. */
export function categoryOf(kind: string): Category {
  const base = Object.hasOwn(BASE_CATEGORIES, kind) ? BASE_CATEGORIES[kind] : undefined;
  if (base) return base;
  if ((QUANTITY_KINDS as readonly string[]).includes(kind)) return 'number';
  if ((ENUM_KINDS as readonly string[]).includes(kind) || /Unit$/.test(kind)) return 'enum';
  return 'nested';
}

/** Categories whose stored value is always one JSON scalar type (or null): the compiler may compare them directly. */
export const SCALAR_CATEGORIES: ReadonlySet<Category> = new Set(['string', 'boolean', 'int32', 'int64', 'number', 'date']);

/** Categories that hold objects a dotted path may reach into. */
export const OBJECT_CATEGORIES: ReadonlySet<Category> = new Set(['any', 'dict', 'nested', 'array', 'set', 'geopoint', 'geomultipolygon']);

export interface GeoPoint { type: 'Point'; coordinates: [number, number] | number[] }
export interface GeoMultiPolygon { type: 'MultiPolygon'; coordinates: number[][][][] }

type Quantity = (typeof QUANTITY_KINDS)[number];
type EnumKind = (typeof ENUM_KINDS)[number] | `${string}Unit`;

/** Type-level mirror of `BASE_CATEGORIES`. */
interface BaseCategories {
  String: 'string'; Boolean: 'boolean'; Int32: 'int32'; Int64: 'int64'; Double: 'number';
  Single: 'number'; DateTime: 'date'; Duration: 'duration'; Object: 'any'; Dictionary: 'dict';
  IDictionary: 'dict'; ICollection: 'array'; List: 'array'; HashSet: 'set';
  GeoPoint: 'geopoint'; GeoMultiPolygon: 'geomultipolygon';
}

/** The category of wire kind K, as `categoryOf` decides it at run time (a kind only known as `string`: any category). */
export type KindCategory<K extends string> = string extends K
  ? Category
  : K extends keyof BaseCategories ? BaseCategories[K]
  : K extends Quantity ? 'number'
  : K extends EnumKind ? 'enum'
  : 'nested';

/** Type-level mirror of `OBJECT_CATEGORIES`: a dotted path may reach into these. */
export type ObjectCategory = 'any' | 'dict' | 'nested' | 'array' | 'set' | 'geopoint' | 'geomultipolygon';

/** The TS type of a value of each category, as read back from the store. */
interface CategoryValues {
  string: string;
  boolean: boolean;
  int32: number;
  int64: number;
  number: number;
  date: string;
  duration: number | string;
  any: unknown;
  dict: Record<string, unknown>;
  array: unknown[];
  set: unknown[];
  geopoint: GeoPoint;
  geomultipolygon: GeoMultiPolygon;
  enum: string | number;
  nested: Record<string, unknown>;
}

/** The TS type of a value of category Cat as read back; on write a date may also be a `Date`. */
export type CategoryValue<Cat extends Category> = CategoryValues[Cat];
export type CategoryInput<Cat extends Category> = CategoryValues[Cat] | (Cat extends 'date' ? Date : never);

/** The TS type of a value of wire kind K (as read back from the store). */
export type KindValue<K extends string> = CategoryValue<KindCategory<K>>;

/** The TS type accepted on write for kind K (dates may be Date objects). */
export type KindInput<K extends string> = CategoryInput<KindCategory<K>>;
