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

/** The TS type of a value of wire kind K (as read back from the store). */
export type KindValue<K extends string> =
  K extends 'String' ? string
  : K extends 'Boolean' ? boolean
  : K extends 'Int32' | 'Int64' | 'Double' | 'Single' | Quantity ? number
  : K extends 'DateTime' ? string
  : K extends 'Duration' ? number | string
  : K extends 'Object' ? unknown
  : K extends 'Dictionary' | 'IDictionary' ? Record<string, unknown>
  : K extends 'ICollection' | 'List' | 'HashSet' ? unknown[]
  : K extends 'GeoPoint' ? GeoPoint
  : K extends 'GeoMultiPolygon' ? GeoMultiPolygon
  : K extends EnumKind ? string | number
  : Record<string, unknown>;

/** The TS type accepted on write for kind K (dates may be Date objects). */
export type KindInput<K extends string> = K extends 'DateTime' ? string | Date : KindValue<K>;
