// The effective configuration as GET /admin/config shows it: every setting by its variable name
// (without prefix), its parsed value, and secrets masked. A setting is secret by its declaration's
// flag (keys, secrets, passwords, tokens, OTLP headers, test OTPs); a URL anywhere in a value loses
// its password, and a value that is a URL the values of its query (a hook's `?apikey=…`).
import { SETTINGS } from './fields.ts';
import type { Config } from './types.ts';

export const MASK = '********';

const SECRET = new Set(SETTINGS.filter((s) => s.secret).map((s) => s.name as string));
export const isSecretSetting = (name: string): boolean => SECRET.has(name);

export interface ShownSetting {
  name: string;
  /** The parsed value (secrets: MASK when set, null when not). */
  value: unknown;
  secret: boolean;
  /** Set in the environment (or by local mode's defaults), rather than a built-in default. */
  set: boolean;
}

/** `scheme://user:password@host…` → `scheme://user:********@host…`, anywhere in a string. */
const withoutPasswords = (s: string): string =>
  s.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s/]*@/gi, `$1${MASK}@`);
/** …and, when the whole value is one URL, `?key=value&…` → `?key=********&…`. */
const masked = (s: string): string => {
  const out = withoutPasswords(s);
  return /^[a-z][a-z0-9+.-]*:\/\/\S*$/i.test(out) ? out.replace(/([?&][^=&#]*=)[^&#]*/g, `$1${MASK}`) : out;
};

function clean(v: unknown): unknown {
  if (typeof v === 'string') return masked(v);
  if (Array.isArray(v)) return v.map(clean);
  if (v && typeof v === 'object') {
    // A parsed DATABASE_URL is {kind, url, dataDir}: its URL is what the operator wrote.
    const o = v as Record<string, unknown>;
    if (typeof o.url === 'string' && 'kind' in o) return masked(o.url);
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, clean(x)]));
  }
  return v ?? null;
}

export function maskedSettings(config: Config): ShownSetting[] {
  const values = config.effective?.values ?? {};
  const set = config.effective?.set ?? new Set<string>();
  return SETTINGS.map(({ name, secret }) => {
    const raw = values[name];
    const present = raw !== undefined && raw !== '' && !(Array.isArray(raw) && raw.length === 0);
    return { name, secret, set: set.has(name), value: secret ? (present ? MASK : null) : clean(raw) };
  });
}
