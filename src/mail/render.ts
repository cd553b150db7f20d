// Renders an email from GoTrue's templates: MAILER_TEMPLATES_* URLs for bodies and
// MAILER_SUBJECTS_* for subjects, in the action language of Go's text/template, bodies escaped
// for their HTML context as html/template escapes them (src/mail/template/,
// docs/decisions/email-templates.md). As GoTrue: a template that cannot be fetched or parsed is
// replaced by the last good one, else by the built-in template of that kind (subject included);
// one that fails while rendering fails the send ("Error sending … email"); a fetched template is
// kept for MAX_AGE and a failed fetch is not retried within RETRY_INTERVAL.
import { concatBytes } from '@noble/hashes/utils.js';
import type { Logger } from '../telemetry/logger.ts';
import { htmlToText } from './html-to-text.ts';
import { isNotification, type MailKind, type NotificationMailKind, type TokenMailKind } from './mailer.ts';
import { escapeHtmlTemplate } from './template/escape.ts';
import { execute } from './template/exec.ts';
import { type Node, parseTemplate, TemplateSyntaxError } from './template/parse.ts';
import { fromJson, type GoValue, TemplateExecError } from './template/values.ts';

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

/** What to render a mail with: the kind's settings and its built-in subject. */
export interface TemplateChoice {
  /** MAILER_TEMPLATES_<KIND>: where the body template lives (a path is taken relative to SITE_URL). */
  templateUrl?: string;
  /** MAILER_SUBJECTS_<KIND> (its default when unset). */
  subject: string;
  /** The kind's built-in subject, used with the built-in body when the configured ones fail. */
  defaultSubject: string;
}

export interface TemplateRenderer {
  /** Throws TemplateRenderError when the template fails while rendering (GoTrue's 500). */
  render(kind: MailKind, vars: TemplateVars, choice: TemplateChoice): Promise<RenderedMail>;
}

/** A template that failed while rendering: the mail is not sent. */
export class TemplateRenderError extends Error {}

export interface TemplateRendererOptions {
  fetch: typeof fetch;
  logger: Logger;
  /** SITE_URL, the base of a template URL that is a path (GoTrue prepends it). */
  siteUrl?: string;
  timeoutMs?: number;
  /** GoTrue's MAILER_TEMPLATE_MAX_AGE: how long a fetched template is used before it is fetched again. */
  ttlMs?: number;
  /** GoTrue's MAILER_TEMPLATE_RETRY_INTERVAL: a failed fetch is not tried again sooner. */
  failureTtlMs?: number;
  /** GoTrue's MAILER_TEMPLATE_MAX_SIZE: bytes read of a template (the rest is cut off). */
  maxBytes?: number;
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

/** A template URL as it is fetched: a path is taken relative to SITE_URL, as GoTrue does. */
export function templateUrlOf(url: string, siteUrl: string): string {
  return /^http/.test(url) ? url : `${siteUrl}${url}`;
}

/** GoTrue's template data: a map, so a name it lacks renders empty; `.Data` is user_metadata. */
function templateData(kind: MailKind, v: TemplateVars): GoValue {
  const data: Record<string, GoValue> = { SiteURL: v.siteUrl, Email: v.email, Data: fromJson(v.data) };
  if (isNotification(kind)) {
    const extra = {
      OldEmail: v.oldEmail,
      OldPhone: v.oldPhone,
      Phone: v.phone,
      Provider: v.provider,
      FactorType: v.factorType,
    };
    for (const [k, x] of Object.entries(extra)) if (x !== undefined) data[k] = x;
    return data;
  }
  data.Token = v.token;
  if (kind === 'reauthentication') return data;
  Object.assign(data, { ConfirmationURL: v.confirmationUrl, TokenHash: v.tokenHash, RedirectTo: v.redirectTo });
  if (kind === 'email_change') Object.assign(data, { NewEmail: v.newEmail ?? '', SendingTo: v.sendingTo ?? v.email });
  return data;
}

/** A body parsed and escaped; an escaping error is kept, to fail each render as Go's Execute does. */
interface Body {
  nodes?: Node[];
  error?: TemplateExecError;
}

function compileBody(src: string): Body {
  const parsed = parseTemplate(src); // TemplateSyntaxError: the caller falls back
  try {
    return { nodes: escapeHtmlTemplate(parsed) };
  } catch (err) {
    if (err instanceof TemplateExecError) return { error: err };
    throw err;
  }
}

const builtInBodies = new Map<MailKind, Body>();
const builtInBody = (kind: MailKind): Body => {
  let b = builtInBodies.get(kind);
  if (!b) {
    b = compileBody(defaultHtml(kind));
    builtInBodies.set(kind, b);
  }
  return b;
};

type CacheEntry = {
  /** The last template fetched and parsed, and when. */
  good?: { body: Body; at: number };
  /** When a fetch was last tried. */
  checkedAt: number;
  inflight?: Promise<Body | undefined>;
};

export function createTemplateRenderer(opts: TemplateRendererOptions): TemplateRenderer {
  const { fetch: doFetch, logger } = opts;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const ttlMs = opts.ttlMs ?? 10 * 60_000;
  const failureTtlMs = opts.failureTtlMs ?? 10_000;
  const maxBytes = opts.maxBytes ?? 1_000_000;
  const now = opts.now ?? (() => Date.now());
  const cache = new Map<string, CacheEntry>();
  const subjects = new Map<string, Node[] | TemplateSyntaxError>();

  // A query string may carry a signature or token: log where the template lives, not how it is authorised.
  const safeUrl = (url: string): string => {
    try {
      const u = new URL(url);
      return `${u.origin}${u.pathname}`;
    } catch {
      return '(invalid URL)';
    }
  };

  async function readLimited(res: Response): Promise<string> {
    const reader = res.body?.getReader();
    if (!reader) return '';
    const chunks: Uint8Array[] = [];
    let size = 0;
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value.subarray(0, maxBytes - size));
      size += Math.min(value.length, maxBytes - size);
    }
    await reader.cancel().catch(() => undefined);
    return new TextDecoder().decode(concatBytes(...chunks));
  }

  async function download(url: string): Promise<Body | undefined> {
    try {
      const res = await doFetch(url, {
        method: 'GET',
        signal: AbortSignal.timeout(timeoutMs),
        headers: { accept: 'text/html, text/plain;q=0.9, */*;q=0.5' },
      });
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => undefined);
        throw new Error(`template server answered ${res.status}`);
      }
      const src = await readLimited(res);
      if (!src.trim()) throw new Error('template is empty');
      return compileBody(src);
    } catch (err) {
      logger.warn('email template unavailable, using the last good one or the built-in default', {
        template_url: safeUrl(url),
        error:
          err instanceof TemplateSyntaxError
            ? `syntax error: ${err.message}`
            : err instanceof Error
              ? err.message
              : String(err),
      });
      return undefined;
    }
  }

  /** The body template at `url`: fresh, the last good one, or undefined (the built-in one). */
  async function body(url: string): Promise<Body | undefined> {
    const t = now();
    let entry = cache.get(url);
    if (!entry) {
      entry = { checkedAt: Number.NEGATIVE_INFINITY };
      cache.set(url, entry);
    }
    if (entry.good && t - entry.good.at < ttlMs) return entry.good.body;
    if (t - entry.checkedAt < failureTtlMs) return entry.good?.body;
    // Concurrent emails share one request.
    if (!entry.inflight) {
      const e = entry;
      e.inflight = download(url).then((b) => {
        e.checkedAt = now();
        if (b) e.good = { body: b, at: e.checkedAt };
        e.inflight = undefined;
        return b;
      });
    }
    return (await entry.inflight) ?? entry.good?.body;
  }

  function subject(src: string): Node[] | TemplateSyntaxError {
    let s = subjects.get(src);
    if (!s) {
      try {
        s = parseTemplate(src);
      } catch (err) {
        if (!(err instanceof TemplateSyntaxError)) throw err;
        logger.warn('email subject template has a syntax error, using the built-in subject and body', {
          error: err.message,
        });
        s = err;
      }
      if (subjects.size > 64) subjects.clear();
      subjects.set(src, s);
    }
    return s;
  }

  function run(nodes: Node[], data: GoValue): string {
    try {
      return execute(nodes, data);
    } catch (err) {
      if (err instanceof TemplateExecError) throw new TemplateRenderError(err.message, { cause: err });
      throw err;
    }
  }

  return {
    async render(kind, vars, choice) {
      const data = templateData(kind, vars);
      let subjectNodes = subject(choice.subject);
      let b: Body | undefined;
      if (subjectNodes instanceof TemplateSyntaxError) {
        subjectNodes = subject(choice.defaultSubject);
        b = builtInBody(kind);
      } else if (choice.templateUrl) {
        b = await body(templateUrlOf(choice.templateUrl, opts.siteUrl ?? ''));
        if (!b) {
          subjectNodes = subject(choice.defaultSubject);
          b = builtInBody(kind);
        }
      } else {
        b = builtInBody(kind);
      }
      if (subjectNodes instanceof TemplateSyntaxError) throw new TemplateRenderError(subjectNodes.message);
      if (b.error) throw new TemplateRenderError(b.error.message, { cause: b.error });
      // A Subject line is text: rendered without HTML escaping (a deliberate difference), on one line.
      const renderedSubject = run(subjectNodes, data).replace(/[\r\n]+/g, ' ');
      const html = run(b.nodes ?? [], data);
      return { subject: renderedSubject, html, text: htmlToText(html) };
    },
  };
}
