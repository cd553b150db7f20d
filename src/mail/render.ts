// Renders an email from GoTrue-style templates: operators keep their MAILER_TEMPLATES_* URLs and
// MAILER_SUBJECTS_* strings when they move from GoTrue, so the same `{{ .Variable }}` syntax works.
// Only variable substitution is supported, not Go template actions ({{ if }}, {{ range }}).
import type { Logger } from '../telemetry/logger.ts';
import { isNotification, type MailKind, type NotificationMailKind, type TokenMailKind } from './mailer.ts';

export interface TemplateVars {
  siteUrl: string;
  email: string;
  confirmationUrl: string;
  token: string;
  tokenHash: string;
  redirectTo: string;
  newEmail?: string;
  /** Notifications: what changed. */
  oldEmail?: string;
  oldPhone?: string;
  phone?: string;
  provider?: string;
  factorType?: string;
  /** The address this email goes to (differs from `email` for the new-address email-change mail). */
  sendingTo?: string;
  /** user_metadata, reachable as `{{ .Data.key }}`. */
  data: Record<string, unknown>;
}

export interface RenderedMail {
  subject: string;
  html: string;
  text: string;
}

export interface TemplateRenderer {
  render(kind: MailKind, vars: TemplateVars, templateUrl: string | undefined, subject: string): Promise<RenderedMail>;
}

export interface TemplateRendererOptions {
  fetch: typeof fetch;
  logger: Logger;
  timeoutMs?: number;
  ttlMs?: number;
  /** How long a failed fetch is remembered, so an unreachable server is not asked on every email. */
  failureTtlMs?: number;
  now?: () => number;
}

// Built-in bodies, close to GoTrue's defaults, used when no template is configured or it is
// unavailable. Reauthentication has no link: the nonce is only ever typed in.
const DEFAULTS: Record<TokenMailKind, { heading: string; intro: string; linkText?: string }> = {
  confirmation: {
    heading: 'Confirm your email',
    intro: 'Follow this link to confirm your email:',
    linkText: 'Confirm your email address',
  },
  invite: {
    heading: 'You have been invited',
    intro: 'You have been invited to create a user on {{ .SiteURL }}. Follow this link to accept the invite:',
    linkText: 'Accept the invite',
  },
  recovery: {
    heading: 'Reset password',
    intro: 'Follow this link to reset the password for your user:',
    linkText: 'Reset password',
  },
  magic_link: { heading: 'Your sign-in link', intro: 'Follow this link to sign in:', linkText: 'Sign in' },
  // MailRequest carries the recipient, not always the current address, so the default only names the new one.
  email_change: {
    heading: 'Confirm email address change',
    intro: 'Follow this link to confirm the change of your email address to {{ .NewEmail }}:',
    linkText: 'Change email address',
  },
  reauthentication: { heading: 'Confirm reauthentication', intro: 'Enter the code below to confirm it is you.' },
};

// Account-change notifications: what happened, and what to do if it was not the user. No link, no code.
const NOTIFICATIONS: Record<NotificationMailKind, { heading: string; intro: string }> = {
  password_changed_notification: {
    heading: 'Your password was changed',
    intro: 'The password of your account {{ .Email }} has just been changed.',
  },
  email_changed_notification: {
    heading: 'Your email address was changed',
    intro: 'The email address of your account is now {{ .Email }} instead of {{ .OldEmail }}.',
  },
  phone_changed_notification: {
    heading: 'Your phone number was changed',
    intro: 'The phone number of your account {{ .Email }} is now {{ .Phone }} instead of {{ .OldPhone }}.',
  },
  identity_linked_notification: {
    heading: 'A sign-in method was added',
    intro: 'Your {{ .Provider }} account can now be used to sign in to your account {{ .Email }}.',
  },
  identity_unlinked_notification: {
    heading: 'A sign-in method was removed',
    intro: 'Your {{ .Provider }} account can no longer be used to sign in to your account {{ .Email }}.',
  },
  mfa_factor_enrolled_notification: {
    heading: 'A verification method was added',
    intro: 'A {{ .FactorType }} factor now verifies sign-ins to your account {{ .Email }}.',
  },
  mfa_factor_unenrolled_notification: {
    heading: 'A verification method was removed',
    intro: 'A {{ .FactorType }} factor no longer verifies sign-ins to your account {{ .Email }}.',
  },
  passkey_added_notification: {
    heading: 'A passkey was added',
    intro: 'A new passkey can now be used to sign in to your account {{ .Email }}, without a password.',
  },
  passkey_removed_notification: {
    heading: 'A passkey was removed',
    intro: 'A passkey can no longer be used to sign in to your account {{ .Email }}.',
  },
};
const NOT_YOU = 'If you did not make this change, secure your account and contact support at once.';

function defaultHtml(kind: MailKind): string {
  if (isNotification(kind)) {
    const n = NOTIFICATIONS[kind];
    return `<h2>${n.heading}</h2>\n<p>${n.intro}</p>\n<p>${NOT_YOU}</p>\n`;
  }
  const d = DEFAULTS[kind];
  const link = d.linkText ? `<p><a href="{{ .ConfirmationURL }}">${d.linkText}</a></p>\n` : '';
  const code = d.linkText ? 'Alternatively, enter the code: ' : 'Your code: ';
  return `<h2>${d.heading}</h2>\n<p>${d.intro}</p>\n${link}<p>${code}{{ .Token }}</p>\n`;
}

function defaultText(kind: MailKind): string {
  if (isNotification(kind)) {
    const n = NOTIFICATIONS[kind];
    return `${n.heading}\n\n${n.intro}\n\n${NOT_YOU}\n`;
  }
  const d = DEFAULTS[kind];
  const link = d.linkText ? `{{ .ConfirmationURL }}\n\n` : '';
  const code = d.linkText ? 'Alternatively, enter the code: ' : 'Your code: ';
  return `${d.heading}\n\n${d.intro}\n\n${link}${code}{{ .Token }}\n`;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

function stringify(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

function lookup(vars: TemplateVars, name: string, key: string | undefined): string {
  if (name === 'Data') return key === undefined ? stringify(vars.data) : stringify(vars.data[key]);
  if (key !== undefined) return '';
  switch (name) {
    case 'SiteURL':
      return vars.siteUrl;
    case 'Email':
      return vars.email;
    case 'ConfirmationURL':
      return vars.confirmationUrl;
    case 'Token':
      return vars.token;
    case 'TokenHash':
      return vars.tokenHash;
    case 'RedirectTo':
      return vars.redirectTo;
    case 'NewEmail':
      return vars.newEmail ?? '';
    case 'SendingTo':
      return vars.sendingTo ?? vars.email;
    case 'OldEmail':
      return vars.oldEmail ?? '';
    case 'OldPhone':
      return vars.oldPhone ?? '';
    case 'Phone':
      return vars.phone ?? '';
    case 'Provider':
      return vars.provider ?? '';
    case 'FactorType':
      return vars.factorType ?? '';
    // Go would fail the whole template on an unknown field; an empty value keeps the email going out.
    default:
      return '';
  }
}

// `{{ .Name }}`, `{{.Data.key}}`, with Go's `{{-`/`-}}` trim markers tolerated (not honoured).
const VARIABLE = /\{\{-?\s*\.([A-Za-z][A-Za-z0-9_]*)(?:\.([A-Za-z0-9_-]+))?\s*-?\}\}/g;

/** Substitutes template variables; `escapeValue` is applied to every value (HTML bodies), not to the template. */
export function substitute(
  template: string,
  vars: TemplateVars,
  escapeValue: (s: string) => string = (s) => s,
): string {
  return template.replace(VARIABLE, (_m, name: string, key: string | undefined) =>
    escapeValue(lookup(vars, name, key)),
  );
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return NAMED_ENTITIES[e.toLowerCase()] ?? m;
  });
}

/**
 * A readable plain-text version of an HTML template, still containing its `{{ }}` variables so
 * they can be filled in unescaped. Links keep their target, since the text part must stay usable.
 */
export function htmlToText(html: string): string {
  return (
    decodeEntities(
      html
        .replace(/<!--[\s\S]*?-->/g, '')
        .replace(/<(head|style|script|title)\b[\s\S]*?<\/\1\s*>/gi, '')
        .replace(
          /<a\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')[^>]*>([\s\S]*?)<\/a\s*>/gi,
          (_m, dq: string | undefined, sq: string | undefined, label: string) => {
            const href = (dq ?? sq ?? '').trim();
            const text = label.replace(/<[^>]*>/g, '').trim();
            return !text || text === href ? href : `${text}: ${href}`;
          },
        )
        .replace(/<br\s*\/?>/gi, '\n')
        .replace(/<\/(p|div|h[1-6]|li|tr|table|blockquote|pre)\s*>/gi, '\n\n')
        .replace(/<li\b[^>]*>/gi, '- ')
        .replace(/<[^>]*>/g, ''),
    )
      .split('\n')
      .map((line) => line.replace(/[ \t\r\f\v]+/g, ' ').trim())
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim() + '\n'
  );
}

type CacheEntry = { expires: number; body: Promise<string | undefined> };

export function createTemplateRenderer(opts: TemplateRendererOptions): TemplateRenderer {
  const { fetch: doFetch, logger } = opts;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const ttlMs = opts.ttlMs ?? 10 * 60_000;
  const failureTtlMs = opts.failureTtlMs ?? 30_000;
  const now = opts.now ?? (() => Date.now());
  const cache = new Map<string, CacheEntry>();

  // A query string may carry a signature or token: log where the template lives, not how it is authorised.
  const safeUrl = (url: string): string => {
    try {
      const u = new URL(url);
      return `${u.origin}${u.pathname}`;
    } catch {
      return '(invalid URL)';
    }
  };

  async function download(url: string): Promise<string | undefined> {
    try {
      const res = await doFetch(url, {
        method: 'GET',
        signal: AbortSignal.timeout(timeoutMs),
        headers: { accept: 'text/html, text/plain;q=0.9, */*;q=0.5' },
      });
      if (!res.ok) {
        await res.body?.cancel().catch(() => undefined);
        throw new Error(`template server answered ${res.status}`);
      }
      const body = await res.text();
      if (!body.trim()) throw new Error('template is empty');
      return body;
    } catch (err) {
      logger.warn('email template unavailable, using the built-in default', {
        template_url: safeUrl(url),
        error: err instanceof Error ? err.message : String(err),
      });
      return undefined;
    }
  }

  function template(url: string): Promise<string | undefined> {
    const t = now();
    const hit = cache.get(url);
    if (hit && hit.expires > t) return hit.body;
    // Concurrent emails share one in-flight request; the entry's lifetime is fixed once it settles.
    const entry: CacheEntry = { expires: Number.POSITIVE_INFINITY, body: download(url) };
    cache.set(url, entry);
    void entry.body.then((body) => {
      entry.expires = now() + (body === undefined ? failureTtlMs : ttlMs);
    });
    return entry.body;
  }

  return {
    async render(kind, vars, templateUrl, subject) {
      const renderedSubject = substitute(subject, vars).replace(/[\r\n]+/g, ' ');
      const fetched = templateUrl ? await template(templateUrl) : undefined;
      if (fetched !== undefined) {
        return {
          subject: renderedSubject,
          html: substitute(fetched, vars, escapeHtml),
          text: substitute(htmlToText(fetched), vars),
        };
      }
      return {
        subject: renderedSubject,
        html: substitute(defaultHtml(kind), vars, escapeHtml),
        text: substitute(defaultText(kind), vars),
      };
    },
  };
}
