// Go's view of the data a GoTrue template reads: a map[string]any of strings and user_metadata
// decoded from JSON (float64 numbers, bool, nil, []any, map[string]any). Template integer
// literals and len/range indexes are Go ints, here bigints, so `eq .Data.age 30` fails as in Go
// (float64 against int). MISSING is Go's invalid reflect.Value: a key absent from a map.

export const MISSING: unique symbol = Symbol('missing');

export type GoValue =
  | typeof MISSING
  | null
  | string
  | number
  | bigint
  | boolean
  | GoValue[]
  | { [key: string]: GoValue };

export class TemplateExecError extends Error {}

/** JSON data (user_metadata) as Go holds it after encoding/json. */
export function fromJson(v: unknown): GoValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(fromJson);
  if (typeof v === 'object') {
    const out: Record<string, GoValue> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = fromJson(x);
    return out;
  }
  return String(v);
}

export const isMap = (v: GoValue): v is { [key: string]: GoValue } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Go's type name, for error messages. */
export function typeName(v: GoValue): string {
  if (v === MISSING || v === null) return 'interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return '[]interface {}';
  return 'map[string]interface {}';
}

/** text/template's truth: false, 0, "", nil, and empty maps and slices are false. */
export function truth(v: GoValue): boolean {
  if (v === MISSING || v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return v.length > 0;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (Array.isArray(v)) return v.length > 0;
  return Object.keys(v).length > 0;
}

/** fmt's %v of a float64 (strconv 'g', shortest): %e where the exponent is < -4 or >= 6 (1e+06, 1.5e-07). */
export function formatFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mantissa = '', expText = '0'] = f.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const e = Math.abs(exp);
    return `${mantissa}e${exp < 0 ? '-' : '+'}${e < 10 ? `0${e}` : e}`;
  }
  return String(f);
}

/** fmt.Sprint of one value (%v). */
export function formatValue(v: GoValue): string {
  if (v === MISSING) return '<no value>';
  if (v === null) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatFloat(v);
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(formatValue).join(' ')}]`;
  const keys = Object.keys(v).sort();
  return `map[${keys.map((k) => `${k}:${formatValue(v[k]!)}`).join(' ')}]`;
}

/** fmt.Sprint: a space between operands when neither is a string. */
export function sprint(args: GoValue[]): string {
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(a);
  });
  return out;
}

type Kind = 'bool' | 'int' | 'float' | 'string' | 'invalid' | 'other';

function kind(v: GoValue): Kind {
  if (v === MISSING || v === null) return 'invalid';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'float';
  if (typeof v === 'string') return 'string';
  return 'other';
}

/** Go's eq: arg1 equal to any of the others; nil never equal and never an error; kinds must agree. */
export function eq(arg1: GoValue, others: GoValue[]): boolean {
  if (others.length === 0) throw new TemplateExecError('missing argument for comparison');
  const k1 = kind(arg1);
  for (const arg of others) {
    const k2 = kind(arg);
    if (k1 !== k2) {
      if (k1 !== 'invalid' && k2 !== 'invalid') throw new TemplateExecError('incompatible types for comparison');
      continue;
    }
    if (k1 === 'invalid') continue;
    if (k1 === 'other') throw new TemplateExecError(`non-comparable type ${typeName(arg1)}`);
    if (arg1 === arg) return true;
  }
  return false;
}

/** lt / le / gt / ge: both of one basic kind, and not bool. */
export function compare(a: GoValue, b: GoValue): number {
  const ka = kind(a);
  const kb = kind(b);
  if (ka === 'invalid' || kb === 'invalid' || ka === 'other' || kb === 'other' || ka === 'bool' || kb === 'bool')
    throw new TemplateExecError('invalid type for comparison');
  if (ka !== kb) throw new TemplateExecError('incompatible types for comparison');
  const x = a as string | number | bigint;
  const y = b as string | number | bigint;
  return x < y ? -1 : x > y ? 1 : 0;
}

const utf8 = new TextEncoder();

export function length(v: GoValue): bigint {
  if (typeof v === 'string') return BigInt(utf8.encode(v).length);
  if (Array.isArray(v)) return BigInt(v.length);
  if (isMap(v)) return BigInt(Object.keys(v).length);
  throw new TemplateExecError(`len of type ${typeName(v)}`);
}

export function index(item: GoValue, keys: GoValue[]): GoValue {
  let cur = item;
  for (const key of keys) {
    if (cur === MISSING || cur === null) throw new TemplateExecError('index of untyped nil');
    if (Array.isArray(cur)) {
      if (typeof key !== 'bigint') throw new TemplateExecError(`cannot index slice/array with type ${typeName(key)}`);
      if (key < 0n || key >= BigInt(cur.length)) throw new TemplateExecError(`index out of range: ${key}`);
      cur = cur[Number(key)]!;
    } else if (isMap(cur)) {
      if (typeof key !== 'string') throw new TemplateExecError(`value has type ${typeName(key)}; should be string`);
      // A map's missing key is its element type's zero value: a nil interface.
      cur = Object.hasOwn(cur, key) ? cur[key]! : null;
    } else {
      throw new TemplateExecError(`can't index item of type ${typeName(cur)}`);
    }
  }
  return cur;
}

/** `.name` on a value: a map's entry (MISSING when absent); nothing else has fields here. */
export function field(receiver: GoValue, name: string): GoValue {
  if (receiver === MISSING) return MISSING;
  if (receiver === null) throw new TemplateExecError(`nil pointer evaluating interface {}.${name}`);
  if (isMap(receiver)) return Object.hasOwn(receiver, name) ? receiver[name]! : MISSING;
  throw new TemplateExecError(`can't evaluate field ${name} in type ${typeName(receiver)}`);
}
