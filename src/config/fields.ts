// The flat table of settings, derived from the sections: every setting by its variable name (the
// flat zod schema over the raw strings, docs/configuration.md's rows, GET /admin/config's order),
// and the check of settings accepted but not acted on yet.
import * as z from 'zod';
import { ALIASES, allowsBare } from './names.ts';
import { SECTIONS } from './sections/index.ts';
import { type Setting, type Support, settingsOf } from './setting.ts';
import type { ConfigVariable, Flat, SettingName } from './types.ts';

export type FieldName = SettingName;
/** Every setting, in the order the sections declare them. */
export const SETTINGS = settingsOf(SECTIONS) as Setting<FieldName, unknown, unknown>[];
export const FIELD_NAMES: readonly FieldName[] = SETTINGS.map((s) => s.name);
const BY_NAME = new Map(SETTINGS.map((s) => [s.name, s]));

/** The flat schema: every setting's parser under its name. */
export const FLAT_SCHEMA = z.object(
  Object.fromEntries(SETTINGS.map((s) => [s.name, s.parser])),
) as unknown as z.ZodType<Flat, Partial<Record<FieldName, string>>>;

/** The settings accepted but not acted on yet, and why (the setting's `notBuilt` flag). */
export const support = (name: FieldName): Support => BY_NAME.get(name)?.support ?? { built: true };

function describeVariable(name: string, description: string): string {
  const aliases = ALIASES[name] ?? [];
  const also = [
    ...(aliases.length > 0 ? [`as ${aliases.join(' or ')}`] : []),
    ...(allowsBare(name) ? ['without a prefix'] : []),
  ];
  return also.length === 0 ? description : `${description} Also read ${also.join(', and ')}.`;
}

function notBuiltNote(s: Support): string {
  if (s.built) return '';
  return ` Not acted on yet (${s.because}): ${s.refuse ? 'start-up stops when it is set' : 'a warning names it when it is set'}.`;
}

/** Every supported variable, unprefixed (read as AUTHSVC_X, then GOTRUE_X). Feeds docs/configuration.md. */
export const CONFIG_VARIABLES: readonly ConfigVariable[] = SETTINGS.map((s) => ({
  name: s.name,
  default: s.shown,
  description: describeVariable(s.name, s.doc) + notBuiltNote(s.support),
  support: s.support,
}));

/** The problems (refused settings) and warnings about settings given a value authsvc does not act on. */
export function unbuiltSettings(
  values: Map<FieldName, string>,
  sources: Map<string, string>,
  parsed: Flat,
  supportOf: (name: FieldName) => Support = support,
): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  const defaults = FLAT_SCHEMA.parse({}, { jitless: true });
  for (const name of FIELD_NAMES) {
    const s = supportOf(name);
    if (s.built || !values.has(name)) continue;
    // A value equal to the default (e.g. TRACING_ENABLED=false) changes nothing.
    if (JSON.stringify(parsed[name]) === JSON.stringify(defaults[name])) continue;
    const key = sources.get(name) ?? name;
    if (s.refuse)
      errors.push(`${key}: ${s.because}; authsvc refuses to start rather than run without it (unset it to start).`);
    else warnings.push(`${key} is set, but ${s.because}: it has no effect.`);
  }
  return { errors, warnings };
}
