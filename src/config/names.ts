// Name resolution: AUTHSVC_X first, then GoTrue's GOTRUE_X (and its nested-struct aliases), then
// the bare name where the spec or GoTrue allows it.

const BARE_NAMES = new Set([
  'PORT',
  'DATABASE_URL',
  'API_EXTERNAL_URL',
  'DB_NAMESPACE',
  'LOG_LEVEL',
  'REQUEST_ID_HEADER',
]);
// GoTrue nests these under a struct, so its real keys carry the struct name twice or differ.
export const ALIASES: Readonly<Record<string, readonly string[]>> = {
  PORT: ['AUTHSVC_API_PORT', 'GOTRUE_API_PORT'],
  DATABASE_URL: ['AUTHSVC_DB_DATABASE_URL', 'GOTRUE_DB_DATABASE_URL'],
  DB_NAMESPACE: ['GOTRUE_DB_DB_NAMESPACE'],
  API_EXTERNAL_URL: ['GOTRUE_API_API_EXTERNAL_URL'],
  REQUEST_ID_HEADER: ['GOTRUE_API_REQUEST_ID_HEADER'],
  // GoTrue's `envconfig:"RP_ID"` tag: envconfig also reads the bare tag name.
  WEBAUTHN_RP_ID: ['RP_ID'],
};

export const allowsBare = (name: string): boolean => BARE_NAMES.has(name) || name.startsWith('OTEL_');

export function candidateKeys(name: string, bare: boolean): string[] {
  const rank = (key: string) => (key.startsWith('AUTHSVC_') ? 0 : 1);
  // Stable sort: AUTHSVC_ keys first, each canonical name before its alias.
  const keys = [`AUTHSVC_${name}`, `GOTRUE_${name}`, ...(ALIASES[name] ?? [])].sort((a, b) => rank(a) - rank(b));
  return bare ? [...keys, name] : keys;
}

export function resolve(
  env: Record<string, string | undefined>,
  name: string,
  bare: boolean,
): { key: string; value: string } | undefined {
  for (const key of candidateKeys(name, bare)) {
    const value = env[key];
    // envconfig treats an empty value as unset, so a blank AUTHSVC_X must not hide GOTRUE_X.
    if (value !== undefined && value !== '') return { key, value };
  }
  return undefined;
}

/** The value of `name` (unprefixed, e.g. `SITE_URL`): AUTHSVC_ first, then GOTRUE_, then bare where allowed. */
export function lookup(
  env: Record<string, string | undefined>,
  name: string,
  bare: boolean = allowsBare(name),
): string | undefined {
  return resolve(env, name, bare)?.value;
}

export const label = (name: string): string =>
  `AUTHSVC_${name} (or GOTRUE_${name}${allowsBare(name) ? `, ${name}` : ''})`;
