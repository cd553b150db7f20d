// A local stand-in for Twilio's Messages API (the machine's edge): the app's real Twilio client
// reaches it through SMS_TWILIO_BASE_URL. It records each text and answers as told: a JSON body
// with a status, or never (to run into INTERNAL_HTTP_TIMEOUT).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type TwilioAnswer = { status: number; body: unknown } | 'hang';

export interface FakeTwilio {
  base: string;
  /** The texts received, in order: `To` without `+`, and the `Body`. */
  texts: Array<{ to: string; body: string }>;
  /** How the next requests are answered; a queued 201 by default. */
  answer: TwilioAnswer;
  /** The code in the last text (the first run of 6 to 10 digits). */
  lastCode(): string;
  close(): Promise<void>;
}

export async function startFakeTwilio(): Promise<FakeTwilio> {
  const fake: Omit<FakeTwilio, 'base' | 'close'> & { base?: string } = {
    texts: [],
    answer: { status: 201, body: { sid: 'SM-fake', status: 'queued' } },
    lastCode() {
      const last = this.texts.at(-1);
      const m = last && /(\d{6,10})/.exec(last.body);
      if (!m) throw new Error('no code has been texted');
      return m[1]!;
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      raw += d;
    });
    req.on('end', () => {
      const form = new URLSearchParams(raw);
      fake.texts.push({ to: (form.get('To') ?? '').replace(/^\+/, ''), body: form.get('Body') ?? '' });
      const a = fake.answer;
      if (a === 'hang') return;
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(fake, {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  }) as FakeTwilio;
}

/** The phone settings for the real Twilio client pointed at `base` (credentials are the fake's). */
export function twilioEnv(base: string): Record<string, string> {
  return {
    AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
    AUTHSVC_SMS_PROVIDER: 'twilio',
    AUTHSVC_SMS_TWILIO_BASE_URL: base,
    AUTHSVC_SMS_TWILIO_ACCOUNT_SID: 'AC-fake',
    AUTHSVC_SMS_TWILIO_AUTH_TOKEN: 'fake-token',
    AUTHSVC_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG-fake',
    AUTHSVC_RATE_LIMIT_SMS_SENT: '100000',
    AUTHSVC_INTERNAL_HTTP_TIMEOUT: '300ms',
  };
}
