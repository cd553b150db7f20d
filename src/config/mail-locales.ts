// Templates per locale (authsvc, beyond GoTrue): MAILER_TEMPLATES_<KIND>_<LOCALE> and
// MAILER_SUBJECTS_<KIND>_<LOCALE>, LOCALE a BCP 47 tag upper-cased with `-` written `_` (FR,
// PT_BR, ZH_HANT). They are not declared one by one like the other settings: any locale may be
// named, so they are read here by pattern, under AUTHSVC_ or GOTRUE_ as the others.
import { DEFAULT_SUBJECTS } from './sections/mail.ts';

/** The kinds' variable names (MAGIC_LINK, PASSWORD_CHANGED_NOTIFICATION) to their keys in `mailer.templates` / `mailer.subjects`. */
const KINDS: Record<string, string> = Object.fromEntries(
  Object.keys(DEFAULT_SUBJECTS).map((key) => [key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase(), key]),
);
// Longest first, so EMAIL_CHANGED_NOTIFICATION is never read as EMAIL_CHANGE plus a locale.
const KIND_NAMES = Object.keys(KINDS).sort((a, b) => b.length - a.length);
const LOCALE = /^[A-Z]{2,3}(?:_[A-Z0-9]{2,8})*$/;

/** Per kind key, per locale (lower case, `-` separated: `pt-br`), the template URL or subject. */
export type LocalizedMail = Record<'templates' | 'subjects', Record<string, Record<string, string>>>;

/** The kind key and locale a variable names, if it is one of these. */
export function parseLocalizedMailName(
  key: string,
): { part: 'templates' | 'subjects'; kind: string; locale: string } | undefined {
  const m = /^(?:AUTHSVC|GOTRUE)_MAILER_(TEMPLATES|SUBJECTS)_(.+)$/.exec(key);
  if (!m) return undefined;
  const rest = m[2]!;
  for (const name of KIND_NAMES) {
    if (!rest.startsWith(`${name}_`)) continue;
    const locale = rest.slice(name.length + 1);
    if (!LOCALE.test(locale)) return undefined;
    return {
      part: m[1] === 'TEMPLATES' ? 'templates' : 'subjects',
      kind: KINDS[name]!,
      locale: locale.toLowerCase().replace(/_/g, '-'),
    };
  }
  return undefined;
}

/** Every localized template and subject set in `env`; AUTHSVC_ wins over GOTRUE_. */
export function readLocalizedMail(env: Record<string, string | undefined>): LocalizedMail {
  const out: LocalizedMail = { templates: {}, subjects: {} };
  const keys = Object.keys(env).sort((a, b) => (a.startsWith('AUTHSVC_') ? 1 : 0) - (b.startsWith('AUTHSVC_') ? 1 : 0));
  for (const key of keys) {
    const value = env[key];
    if (value === undefined || value === '') continue;
    const name = parseLocalizedMailName(key);
    if (!name) continue;
    const byKind = out[name.part];
    const byLocale = byKind[name.kind] ?? {};
    byKind[name.kind] = byLocale;
    byLocale[name.locale] = value;
  }
  return out;
}
