// A mailbox for end-to-end tests: a plain SMTP server (smtp-server) on a free local port that
// accepts every message, parses it as a mail client would (postal-mime) and hands it to the test
// that waits for mail to that address. No TLS, no AUTH: the app under test talks plain SMTP to it.
import type { AddressInfo } from 'node:net';
import PostalMime, { type Email } from 'postal-mime';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** Envelope recipients (RCPT TO), lower-cased. */
  envelopeTo: string[];
  /** Envelope sender (MAIL FROM). */
  envelopeFrom: string;
  raw: Buffer;
  parsed: Email;
}

export interface Mailbox {
  port: number;
  /** Every message received so far, in arrival order. */
  messages: ReceivedMail[];
  /** All messages received so far for `address`. */
  to(address: string): ReceivedMail[];
  /**
   * The next message for `address` not returned by an earlier `next(address)` call: one already
   * received, or the first to arrive within `timeoutMs`.
   */
  next(address: string, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startMailbox(): Promise<Mailbox> {
  const messages: ReceivedMail[] = [];
  const handedOut = new Map<string, number>();
  const waiters = new Set<{ address: string; done: (m: ReceivedMail) => void }>();
  const forAddress = (address: string) => messages.filter((m) => m.envelopeTo.includes(address.toLowerCase()));

  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    // The app keeps pooled connections open; do not wait the default 30 s for them at close.
    closeTimeout: 100,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        PostalMime.parse(raw).then(
          (parsed) => {
            const mail: ReceivedMail = {
              envelopeTo: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              raw,
              parsed,
            };
            messages.push(mail);
            for (const w of waiters) {
              if (mail.envelopeTo.includes(w.address)) {
                waiters.delete(w);
                w.done(mail);
                break;
              }
            }
            cb();
          },
          (err: Error) => cb(err),
        );
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });

  return {
    port: (server.server.address() as AddressInfo).port,
    messages,
    to: forAddress,
    next(address, timeoutMs = 5_000) {
      const key = address.toLowerCase();
      const seen = handedOut.get(key) ?? 0;
      handedOut.set(key, seen + 1);
      const already = forAddress(key)[seen];
      if (already) return Promise.resolve(already);
      return new Promise<ReceivedMail>((done, fail) => {
        const w = {
          address: key,
          done: (m: ReceivedMail) => {
            clearTimeout(timer);
            done(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          fail(new Error(`no email to ${address} within ${timeoutMs} ms (${forAddress(key).length} received before)`));
        }, timeoutMs);
        waiters.add(w);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The link a reader clicks: the first `<a href>` of the HTML part, entities decoded. (The text part
 * may mention other URLs, such as the site's, before the link.)
 */
export function mailLink(mail: ReceivedMail): string | undefined {
  const href = mail.parsed.html?.match(/<a\s[^>]*href="([^"]+)"/i)?.[1];
  return href
    ?.replace(/&amp;/g, '&')
    .replace(/&#34;|&quot;/g, '"')
    .replace(/&#39;/g, "'");
}

/** The one-time code in the text part: a run of 6–10 digits standing on its own (links removed first). */
export function mailCode(mail: ReceivedMail): string | undefined {
  const text = (mail.parsed.text ?? '').replace(/https?:\/\/\S+/g, ' ');
  return text.match(/(?<![\w.-])(\d{6,10})(?![\w.-])/)?.[1];
}

/** The link and code of the next mail to `email` (what the runtime smoke conversation follows). */
export async function nextLinkAndCode(mailbox: Mailbox, email: string): Promise<{ link: string; code?: string }> {
  const mail = await mailbox.next(email, 10_000);
  const link = mailLink(mail);
  if (!link) throw new Error(`no link in the email to ${email}`);
  return { link, code: mailCode(mail) };
}
