// The configuration's shape, derived from the settings of sections/: the Config object the rest of
// authsvc reads, the flat record of parsed settings, and what parsing returns. Every duration is
// in seconds.
import type { HookKind, HookTarget } from './kinds.ts';
import type { LocalizedMail } from './mail-locales.ts';
import type { SECTIONS } from './sections/index.ts';
import type { Built, FlatOf, NameOf, Support } from './setting.ts';

type Sections = typeof SECTIONS;

/** Every duration is in seconds. */
export type Config = Built<Sections> & {
  local: boolean;
  /** RESEND_API_KEY wins over SMTP_HOST; neither, emails are written to the log. */
  mailer: {
    transport: 'smtp' | 'resend' | 'log';
    /** MAILER_TEMPLATES_<KIND>_<LOCALE> / MAILER_SUBJECTS_<KIND>_<LOCALE> (config/mail-locales.ts). */
    localized: LocalizedMail;
  };
  /** The URI resolved to a transport; unset when the URI is empty (an enabled hook so configured fails each call, as in GoTrue). */
  hooks: Record<HookKind, { target?: HookTarget }>;
  /**
   * Every setting as parsed (every setting → value, secrets included) and the names that were set
   * (local-mode defaults count as set): read only by maskedSettings (config/effective.ts).
   */
  effective?: { values: Readonly<Record<string, unknown>>; set: ReadonlySet<string> };
};
/** Every setting by its name, as parsed. */
export type Flat = FlatOf<Sections>;
export type SettingName = NameOf<Sections>;

/**
 * `notices`: local-mode defaults that were chosen. `warnings`: prefixed variables that name no
 * setting (a GoTrue setting authsvc does not have, or a typo); they have no effect.
 */
export type ConfigResult =
  | { ok: true; config: Config; notices: string[]; warnings: string[] }
  | { ok: false; errors: string[] };
export type ConfigVariable = { name: string; default: string; description: string; support: Support };
