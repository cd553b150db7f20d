// Turns a semantic MailRequest into a rendered message and hands it to a transport (SMTP,
// Resend). Transports only move bytes; subjects, templates and the sender live here so every
// transport sends the same email.
import { DEFAULT_SUBJECTS } from '../config/sections/mail.ts';
import type { Config } from '../config/types.ts';
import { type Logger, errorFields } from '../telemetry/logger.ts';
import {
  isNotification,
  MAIL_LABEL,
  type MailKind,
  type MailRequest,
  type Mailer,
  type TokenMailKind,
} from './mailer.ts';
import type { TemplateRenderer, TemplateVars } from './render.ts';

export interface MailMessage {
  from: string;
  fromName?: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  /**
   * What makes this email one logical send: its kind, recipient and token hash (every email
   * authsvc sends carries a one-time token). The same for a retry of the send, different for
   * any other email. A transport whose provider deduplicates derives a key from it (never sends
   * it: the token hash is a credential); unset when a message has no token.
   */
  sendIdentity?: string;
}

export interface MailTransport {
  deliver(m: MailMessage): Promise<void>;
}

export interface TransportMailerOptions {
  config: {
    smtp: Pick<Config['smtp'], 'adminEmail' | 'senderName'>;
    mailer: Pick<Config['mailer'], 'subjects' | 'templates'> & Partial<Pick<Config['mailer'], 'localized'>>;
  };
  transport: MailTransport;
  renderer: TemplateRenderer;
  logger: Logger;
}

type SettingKey = keyof Config['mailer']['subjects'];

const TOKEN_SETTING: Record<TokenMailKind, SettingKey> = {
  confirmation: 'confirmation',
  invite: 'invite',
  recovery: 'recovery',
  magic_link: 'magicLink',
  email_change: 'emailChange',
  reauthentication: 'reauthentication',
};
/** Notifications' settings are named after their kind (MAILER_SUBJECTS_PASSWORD_CHANGED_NOTIFICATION → password_changed_notification). */
const settingOf = (kind: MailKind): SettingKey => (isNotification(kind) ? kind : TOKEN_SETTING[kind]);

/** RFC 5322 display name + address, quoting the name when it holds anything beyond atext and spaces. */
export function formatAddress(address: string, name?: string): string {
  const clean = (name ?? '').replace(/[\r\n]+/g, ' ').trim();
  if (!clean) return address;
  const display = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~ ]+$/.test(clean) ? clean : `"${clean.replace(/(["\\])/g, '\\$1')}"`;
  return `${display} <${address}>`;
}

function templateVars(mail: MailRequest): TemplateVars {
  return {
    siteUrl: mail.siteUrl,
    email: mail.email ?? mail.to,
    sendingTo: mail.to,
    confirmationUrl: mail.confirmationUrl,
    token: mail.token,
    tokenHash: mail.tokenHash,
    redirectTo: mail.redirectTo,
    newEmail: mail.newEmail,
    data: mail.userMetadata,
    oldEmail: mail.oldEmail,
    oldPhone: mail.oldPhone,
    phone: mail.phone,
    provider: mail.provider,
    factorType: mail.factorType,
  };
}

/** The user's locale: user_metadata.locale, else user_metadata.lang (lower case, `-` separated). */
function localeOf(metadata: Record<string, unknown>): string | undefined {
  const raw = typeof metadata.locale === 'string' && metadata.locale ? metadata.locale : metadata.lang;
  return typeof raw === 'string' && raw ? raw.toLowerCase().replace(/_/g, '-') : undefined;
}

/** The entry for `locale` or, dropping subtags from the right, a shorter tag (pt-br → pt). */
function pickLocalized(byLocale: Record<string, string> | undefined, locale: string | undefined): string | undefined {
  if (!byLocale || !locale) return undefined;
  for (let tag = locale; tag; tag = tag.includes('-') ? tag.slice(0, tag.lastIndexOf('-')) : '') {
    if (byLocale[tag] !== undefined) return byLocale[tag];
  }
  return undefined;
}

// Logs name the recipient's domain only: enough to spot a provider problem, not a personal address.
function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at >= 0 ? address.slice(at + 1).toLowerCase() : '';
}

export function createMailer(opts: TransportMailerOptions): Mailer {
  const { config, transport, renderer, logger } = opts;
  return {
    async send(mail) {
      const key = settingOf(mail.kind);
      // Bodies and subjects are looked up apart: a locale may have its own subject and share the body.
      const locale = localeOf(mail.userMetadata);
      const localized = config.mailer.localized;
      const rendered = await renderer.render(mail.kind, templateVars(mail), {
        templateUrl: pickLocalized(localized?.templates[key], locale) ?? config.mailer.templates[key],
        subject: pickLocalized(localized?.subjects[key], locale) ?? config.mailer.subjects[key],
        defaultSubject: DEFAULT_SUBJECTS[key],
      });
      const fields = { mail_kind: mail.kind, to_domain: domainOf(mail.to) };
      try {
        await transport.deliver({
          from: config.smtp.adminEmail,
          fromName: config.smtp.senderName || undefined,
          to: mail.to,
          ...rendered,
          sendIdentity: mail.tokenHash ? `${mail.kind}\n${mail.to}\n${mail.tokenHash}` : undefined,
        });
      } catch (cause) {
        logger.error('email delivery failed', { ...fields, ...errorFields(cause) });
        throw new Error(`Error sending ${MAIL_LABEL[mail.kind]} email`, { cause });
      }
      logger.info('email sent', fields);
    },
  };
}
