// One setting, declared once: its variable name (unprefixed; read as AUTHSVC_X, then GOTRUE_X), the
// parser of its raw string, the default as the docs show it, its doc line and its flags. The files
// of sections/ nest settings in the shape the rest of authsvc reads; the Config type, the flat
// schema, the docs table, GET /admin/config's masking and the unknown-name warnings are derived
// from them, as GoTrue derives its configuration from tagged struct fields.
import * as z from 'zod';
import { parseBool, parseList } from './values.ts';

type Raw = string | undefined;
/** A zod schema over the raw string (undefined when unset); a bad value is an issue, not a throw. */
export type Parser<T> = z.ZodType<T, Raw>;

/**
 * Whether authsvc acts on a setting. A setting it accepts (GoTrue's name, so a configuration
 * carried over does not fail) but does not act on yet must say so when it is given a value that
 * differs from its default: start-up stops for a security setting (running without it would be
 * running less protected than the operator asked), and logs a warning naming it otherwise.
 */
export type Support = { built: true } | { built: false; refuse: boolean; because: string };

export interface Flags {
  /** Masked in GET /admin/config (keys, secrets, passwords, tokens). */
  secret?: boolean;
  /** Accepted but not acted on yet, and why. */
  notBuilt?: { because: string; refuse?: boolean };
}

export class Setting<N extends string = string, P = unknown, V = P> {
  /** Types only: the parsed value and the value in Config. */
  declare readonly parsedType: P;
  declare readonly valueType: V;

  constructor(
    readonly name: N,
    readonly parser: Parser<P>,
    /** The default as docs/configuration.md shows it. */
    readonly shown: string,
    readonly doc: string,
    readonly flags: Flags,
    finish: (parsed: P, local: boolean) => V,
  ) {
    // Stored untyped so that a Setting of any value types is a Setting<string, unknown, unknown>.
    this.convert = finish as (parsed: unknown, local: boolean) => unknown;
  }

  private readonly convert: (parsed: unknown, local: boolean) => unknown;

  /** From the parsed value to the one Config holds. */
  finish(parsed: P, local: boolean): V {
    return this.convert(parsed, local) as V;
  }

  get secret(): boolean {
    return this.flags.secret === true;
  }

  get support(): Support {
    const n = this.flags.notBuilt;
    return n ? { built: false, refuse: n.refuse === true, because: n.because } : { built: true };
  }

  /** The same setting, read into Config through `fn` (a fallback, a local-mode default). */
  map<W>(fn: (value: V, local: boolean) => W): Setting<N, P, W> {
    return new Setting(this.name, this.parser, this.shown, this.doc, this.flags, (p: P, local) =>
      fn(this.finish(p, local), local),
    );
  }
}

export const setting = <N extends string, P>(
  name: N,
  parser: Parser<P>,
  shown: string,
  doc: string,
  flags: Flags = {},
): Setting<N, P> => new Setting(name, parser, shown, doc, flags, (p) => p);

const rawValue = z.string().optional();

function report(ctx: z.RefinementCtx, e: unknown): void {
  // `continue` lets the object-level cross checks run even when a field failed.
  ctx.addIssue({ code: 'custom', message: e instanceof Error ? e.message : String(e), continue: true });
}

/** Parsed by `parse`; undefined when unset. */
export function opt<T>(parse: (raw: string) => T): Parser<T | undefined> {
  return rawValue.transform((raw, ctx): T | undefined => {
    if (raw === undefined) return undefined;
    try {
      return parse(raw);
    } catch (e) {
      report(ctx, e);
      return undefined;
    }
  });
}

/** Parsed by `parse`; `fallback` when unset. */
export function withDefault<T>(parse: (raw: string) => T, fallback: T): Parser<T> {
  return rawValue.transform((raw, ctx): T => {
    if (raw === undefined) return fallback;
    try {
      return parse(raw);
    } catch (e) {
      report(ctx, e);
      return fallback;
    }
  });
}

export const text = () => opt((raw) => raw);
export const textOr = (fallback: string) => withDefault((raw) => raw, fallback);
export const bool = (fallback: boolean) => withDefault(parseBool, fallback);
export const list = (fallback: string[] = []) => withDefault(parseList, fallback);

type AnySetting = Setting<string, unknown, unknown>;
/** A section: settings, and sections, by the key Config reads them under. */
export type Tree = AnySetting | { readonly [key: string]: Tree };
/** The value a tree of settings builds. */
export type Built<T> = T extends { readonly valueType: infer V } ? V : Section<T>;
// A setting that may be unset is an optional key, as a hand-written type would have it.
type Section<T> = { -readonly [K in keyof T as undefined extends Built<T[K]> ? never : K]: Built<T[K]> } & {
  -readonly [K in keyof T as undefined extends Built<T[K]> ? K : never]?: Built<T[K]>;
};
type Leaves<T> = T extends { readonly name: infer N extends string; readonly parsedType: infer P }
  ? { name: N; parsed: P }
  : { [K in keyof T]: Leaves<T[K]> }[keyof T];
/** Every setting of a tree by its name, as parsed (before `map`). */
export type FlatOf<T> = {
  [L in Leaves<T> as L extends { name: infer N extends string } ? N : never]: L extends { parsed: infer P } ? P : never;
};
export type NameOf<T> = Leaves<T> extends infer L ? (L extends { name: infer N extends string } ? N : never) : never;

const isSetting = (t: Tree): t is AnySetting => t instanceof Setting;

/** Every setting of a tree, in declaration order. */
export function settingsOf(tree: Tree): AnySetting[] {
  if (isSetting(tree)) return [tree];
  return Object.values(tree).flatMap(settingsOf);
}

/** The tree's value from the parsed settings (by name). */
export function build<T extends Tree>(tree: T, parsed: Readonly<Record<string, unknown>>, local: boolean): Built<T> {
  if (isSetting(tree)) return tree.finish(parsed[tree.name], local) as Built<T>;
  return Object.fromEntries(Object.entries(tree).map(([k, t]) => [k, build(t, parsed, local)])) as Built<T>;
}

/** A subtree per key (a provider, a hook kind), made by `make`. */
export const each = <K extends string, T>(keys: readonly K[], make: (key: K) => T): Record<K, T> =>
  Object.fromEntries(keys.map((k) => [k, make(k)])) as Record<K, T>;

export const upper = <S extends string>(s: S): Uppercase<S> => s.toUpperCase() as Uppercase<S>;
