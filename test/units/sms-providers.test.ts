// The five SMS providers against fake servers on local ports, reached through
// SMS_<PROVIDER>_BASE_URL: the exact request GoTrue sends (method, path, auth, form fields), and
// how success, a provider refusal, a 5xx, a timeout and an unreachable host are read.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { createSmsProvider } from '../../src/sms/create.ts';
import { type SmsMessage, type SmsProvider, SmsSendError } from '../../src/sms/provider.ts';
import { GOTRUE_ENV } from '../helpers/config-env.ts';
import { freePort } from '../helpers/free-port.ts';

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  raw: string;
  form: Record<string, string>;
}
type Answer = { status: number; body: unknown } | 'hang';

/** One fake provider: records requests, answers with `next` (a JSON body, or never). */
let server: Server;
let base = '';
const seen: Seen[] = [];
let next: Answer = { status: 200, body: {} };
beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      raw += d;
    });
    req.on('end', () => {
      seen.push({
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        raw,
        form: Object.fromEntries(new URLSearchParams(raw)),
      });
      if (next === 'hang') return;
      res.writeHead(next.status, { 'content-type': 'application/json' });
      res.end(typeof next.body === 'string' ? next.body : JSON.stringify(next.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const SECRETS = { token: 'tw-secret-token', key: 'mb-secret-key', tl: 'tl-secret-key', vs: 'vn-secret' };

/** For the requests the fake provider never answers. */
const SHORT_TIMEOUT = { GOTRUE_INTERNAL_HTTP_TIMEOUT: '300ms' };

function provider(name: string, extra: Record<string, string> = {}, b = base): SmsProvider {
  const parsed = parseConfig({
    ...GOTRUE_ENV,
    GOTRUE_SMS_PROVIDER: name,
    // Long enough for a loaded machine; the timeout cases use SHORT_TIMEOUT.
    GOTRUE_INTERNAL_HTTP_TIMEOUT: '30s',
    GOTRUE_SMS_TWILIO_ACCOUNT_SID: 'AC123',
    GOTRUE_SMS_TWILIO_AUTH_TOKEN: SECRETS.token,
    GOTRUE_SMS_TWILIO_MESSAGE_SERVICE_SID: '+1 555 000 1111',
    GOTRUE_SMS_TWILIO_VERIFY_ACCOUNT_SID: 'AC123',
    GOTRUE_SMS_TWILIO_VERIFY_AUTH_TOKEN: SECRETS.token,
    GOTRUE_SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID: 'VA9',
    GOTRUE_SMS_MESSAGEBIRD_ACCESS_KEY: SECRETS.key,
    GOTRUE_SMS_MESSAGEBIRD_ORIGINATOR: 'Acme',
    GOTRUE_SMS_TEXTLOCAL_API_KEY: SECRETS.tl,
    GOTRUE_SMS_TEXTLOCAL_SENDER: 'TXTLCL',
    GOTRUE_SMS_VONAGE_API_KEY: 'vk',
    GOTRUE_SMS_VONAGE_API_SECRET: SECRETS.vs,
    GOTRUE_SMS_VONAGE_FROM: 'Acme',
    [`GOTRUE_SMS_${name.toUpperCase()}_BASE_URL`]: b,
    ...extra,
  });
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  return createSmsProvider(parsed.config.sms, globalThis.fetch.bind(globalThis))!;
}

const msg = (over: Partial<SmsMessage> = {}): SmsMessage => ({
  phone: '15550100',
  message: 'Your code is 123456',
  channel: 'sms',
  otp: '123456',
  ...over,
});

async function sendOnce(
  p: SmsProvider,
  answer: Answer,
  m = msg(),
): Promise<{ id?: string; error?: SmsSendError; req?: Seen }> {
  seen.length = 0;
  next = answer;
  try {
    return { id: await p.send(m), req: seen[0] };
  } catch (err) {
    expect(err).toBeInstanceOf(SmsSendError);
    for (const s of Object.values(SECRETS)) expect((err as Error).message).not.toContain(s);
    return { error: err as SmsSendError, req: seen[0] };
  }
}

const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
const FORM = 'application/x-www-form-urlencoded';

describe('twilio', () => {
  test('SMS: POST /2010-04-01/Accounts/{sid}/Messages.json, Basic auth, To=+phone, Channel, From, Body', async () => {
    const r = await sendOnce(provider('twilio'), { status: 201, body: { sid: 'SM1', status: 'queued' } });
    expect(r.id).toBe('SM1');
    expect(r.req).toMatchObject({ method: 'POST', path: '/2010-04-01/Accounts/AC123/Messages.json' });
    expect(r.req!.headers.authorization).toBe(basic('AC123', SECRETS.token));
    expect(r.req!.headers['content-type']).toBe(FORM);
    expect(r.req!.form).toEqual({
      To: '+15550100',
      Channel: 'sms',
      From: '+1 555 000 1111',
      Body: 'Your code is 123456',
    });
    // Keys sorted, as Go's url.Values.Encode writes them.
    expect(r.req!.raw.split('&').map((kv) => kv.split('=')[0])).toEqual(['Body', 'Channel', 'From', 'To']);
  });

  test('WhatsApp: whatsapp: prefixes on To and on a number sender; a content template takes the code', async () => {
    const plain = await sendOnce(
      provider('twilio'),
      { status: 200, body: { sid: 'SM2', status: 'sent' } },
      msg({ channel: 'whatsapp' }),
    );
    expect(plain.req!.form).toEqual({
      To: 'whatsapp:+15550100',
      Channel: 'whatsapp',
      From: 'whatsapp:+1 555 000 1111',
      Body: 'Your code is 123456',
    });
    const service = provider('twilio', {
      GOTRUE_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG77',
      GOTRUE_SMS_TWILIO_CONTENT_SID: 'HX1',
    });
    const tpl = await sendOnce(service, { status: 201, body: { sid: 'SM3' } }, msg({ channel: 'whatsapp' }));
    expect(tpl.req!.form).toEqual({
      To: 'whatsapp:+15550100',
      Channel: 'whatsapp',
      From: 'MG77',
      ContentSid: 'HX1',
      ContentVariables: '{"1": "123456"}',
    });
  });

  test("errors: Twilio's message and more_info; failed/undelivered status; 5xx; timeout; unreachable", async () => {
    const p = provider('twilio');
    const refused = await sendOnce(p, {
      status: 400,
      body: {
        code: 21211,
        message: "The 'To' number is not valid.",
        more_info: 'https://www.twilio.com/docs/errors/21211',
        status: 400,
      },
    });
    expect(refused.error!.message).toBe(
      "The 'To' number is not valid. More information: https://www.twilio.com/docs/errors/21211",
    );
    const failed = await sendOnce(p, {
      status: 201,
      body: { sid: 'SM9', status: 'undelivered', error_code: '30003', error_message: 'Unreachable' },
    });
    expect(failed.error!.message).toBe('twilio error: Unreachable 30003 for message SM9');
    const down = await sendOnce(p, { status: 503, body: '<html>busy</html>' });
    expect(down.error!.message).toBe('Twilio answered HTTP 503 with a body that is not JSON');
    const slow = await sendOnce(provider('twilio', SHORT_TIMEOUT), 'hang');
    expect(slow.error!.message).toBe('request to Twilio failed: no answer within 300 ms');
    const gone = await sendOnce(provider('twilio', {}, `http://127.0.0.1:${await freePort()}`), {
      status: 200,
      body: {},
    });
    expect(gone.error!.message).toBe('request to Twilio failed: the request failed');
  });
});

describe('twilio_verify', () => {
  test('send: POST /v2/Services/{sid}/Verifications with To and Channel only; check: VerificationCheck with To and Code', async () => {
    const p = provider('twilio_verify');
    expect(p.verifiesCodes).toBe(true);
    const r = await sendOnce(p, { status: 201, body: { sid: 'VE1', status: 'pending' } });
    expect(r.id).toBe('VE1');
    expect(r.req).toMatchObject({ method: 'POST', path: '/v2/Services/VA9/Verifications' });
    expect(r.req!.headers.authorization).toBe(basic('AC123', SECRETS.token));
    expect(r.req!.form).toEqual({ To: '+15550100', Channel: 'sms' });

    seen.length = 0;
    next = { status: 200, body: { status: 'approved', valid: true } };
    await p.verifyCode!('15550100', '424242');
    expect(seen[0]).toMatchObject({
      path: '/v2/Services/VA9/VerificationCheck',
      form: { To: '+15550100', Code: '424242' },
    });
    next = { status: 200, body: { status: 'pending', valid: false, error_message: '' } };
    await expect(p.verifyCode!('15550100', '000000')).rejects.toThrow('twilio verification error:  pending');
    next = {
      status: 404,
      body: { message: 'The requested resource was not found', more_info: 'https://www.twilio.com/docs/errors/20404' },
    };
    await expect(p.verifyCode!('15550100', '000000')).rejects.toThrow(
      'The requested resource was not found More information: https://www.twilio.com/docs/errors/20404',
    );
  });

  test('send: a form body; WhatsApp goes as Channel=whatsapp with no prefix on To; refusal, 5xx and timeout', async () => {
    const p = provider('twilio_verify');
    const wa = await sendOnce(
      p,
      { status: 201, body: { sid: 'VE2', status: 'pending' } },
      msg({ channel: 'whatsapp' }),
    );
    expect(wa.id).toBe('VE2');
    expect(wa.req!.headers['content-type']).toBe(FORM);
    expect(wa.req!.form).toEqual({ To: '+15550100', Channel: 'whatsapp' });
    const refused = await sendOnce(p, {
      status: 400,
      body: {
        code: 60200,
        message: 'Invalid parameter `To`: +15550100',
        more_info: 'https://www.twilio.com/docs/errors/60200',
        status: 400,
      },
    });
    expect(refused.error!.message).toBe(
      'Invalid parameter `To`: +15550100 More information: https://www.twilio.com/docs/errors/60200',
    );
    // A 5xx is read as Twilio's error answer, as GoTrue decodes it; one that is not JSON fails as such.
    const busy = await sendOnce(p, {
      status: 503,
      body: {
        code: 20503,
        message: 'Service Unavailable',
        more_info: 'https://www.twilio.com/docs/errors/20503',
        status: 503,
      },
    });
    expect(busy.error!.message).toBe('Service Unavailable More information: https://www.twilio.com/docs/errors/20503');
    const down = await sendOnce(p, { status: 502, body: '<html>bad gateway</html>' });
    expect(down.error!.message).toBe('Twilio Verify answered HTTP 502 with a body that is not JSON');
    const slow = await sendOnce(provider('twilio_verify', SHORT_TIMEOUT), 'hang');
    expect(slow.error!.message).toBe('request to Twilio Verify failed: no answer within 300 ms');
  });
});

describe('messagebird', () => {
  test('POST /messages, AccessKey auth, originator/body/recipients/type/datacoding; the id; the errors GoTrue reads', async () => {
    const p = provider('messagebird');
    const r = await sendOnce(p, { status: 201, body: { id: 'mb-1', recipients: { totalSentCount: 1 } } });
    expect(r.id).toBe('mb-1');
    expect(r.req).toMatchObject({ method: 'POST', path: '/messages' });
    expect(r.req!.headers.authorization).toBe(`AccessKey ${SECRETS.key}`);
    expect(r.req!.headers['content-type']).toBe(FORM);
    expect(r.req!.form).toEqual({
      originator: 'Acme',
      body: 'Your code is 123456',
      recipients: '15550100',
      type: 'sms',
      datacoding: 'unicode',
    });
    const refused = await sendOnce(p, {
      status: 422,
      body: { errors: [{ code: 9, description: 'no (correct) recipients found', parameter: 'recipients' }] },
    });
    expect(refused.error!.message).toBe('no (correct) recipients found');
    // A 5xx is read as a message, as GoTrue does: nothing sent.
    const down = await sendOnce(p, { status: 500, body: { id: '', recipients: { totalSentCount: 0 } } });
    expect(down.error!.message).toBe('messagebird error: total sent count is 0');
    expect((await sendOnce(provider('messagebird', SHORT_TIMEOUT), 'hang')).error!.message).toBe(
      'request to MessageBird failed: no answer within 300 ms',
    );
    expect((await sendOnce(p, { status: 200, body: {} }, msg({ channel: 'whatsapp' }))).error!.message).toBe(
      'channel type "whatsapp" is not supported for Messagebird',
    );
  });
});

describe('textlocal', () => {
  test("POST /send with the key in the form; success gives no id (GoTrue's quirk); errors with their code", async () => {
    const p = provider('textlocal');
    const r = await sendOnce(p, { status: 200, body: { status: 'success', messages: [{ id: 'tl-1' }] } });
    expect(r.id).toBe('');
    expect(r.req).toMatchObject({ method: 'POST', path: '/send' });
    expect(r.req!.headers.authorization).toBeUndefined();
    expect(r.req!.form).toEqual({
      sender: 'TXTLCL',
      apikey: SECRETS.tl,
      message: 'Your code is 123456',
      numbers: '15550100',
    });
    const bad = await sendOnce(p, {
      status: 200,
      body: { status: 'failure', errors: [{ code: 7, message: 'Insufficient credits' }] },
    });
    expect(bad.error!.message).toBe('textlocal error: Insufficient credits (code: 7) message ');
    const tpl = await sendOnce(p, {
      status: 200,
      body: { status: 'failure', errors: [{ code: 80, message: 'Invalid template' }] },
    });
    expect(tpl.error!.message).toBe(
      'textlocal error: Invalid template (code: 80) template message: Your code is 123456',
    );
    expect((await sendOnce(p, { status: 502, body: 'Bad gateway' })).error!.message).toBe(
      'Textlocal answered HTTP 502 with a body that is not JSON',
    );
  });

  test('a form body; a provider that never answers times out', async () => {
    const p = provider('textlocal');
    const r = await sendOnce(p, { status: 200, body: { status: 'success' } });
    expect(r.req!.headers['content-type']).toBe(FORM);
    const slow = await sendOnce(provider('textlocal', SHORT_TIMEOUT), 'hang');
    expect(slow.error!.message).toBe('request to Textlocal failed: no answer within 300 ms');
  });
});

describe('vonage', () => {
  test('POST /sms/json with key and secret in the form; type=unicode only for non-ASCII; status "0" is success', async () => {
    const p = provider('vonage');
    const r = await sendOnce(p, { status: 200, body: { messages: [{ 'message-id': 'vn-1', status: '0' }] } });
    expect(r.id).toBe('vn-1');
    expect(r.req).toMatchObject({ method: 'POST', path: '/sms/json' });
    expect(r.req!.form).toEqual({
      from: 'Acme',
      to: '15550100',
      text: 'Your code is 123456',
      api_key: 'vk',
      api_secret: SECRETS.vs,
    });
    const uni = await sendOnce(
      p,
      { status: 200, body: { messages: [{ 'message-id': 'vn-2', status: '0' }] } },
      msg({ message: 'Dein Code: 123456 ✓' }),
    );
    expect(uni.req!.form.type).toBe('unicode');
    const bad = await sendOnce(p, {
      status: 200,
      body: { messages: [{ 'message-id': 'vn-3', status: '4', 'error-text': 'Bad Credentials' }] },
    });
    expect(bad.error!.message).toBe('vonage error: Bad Credentials (status: 4) for message vn-3');
    expect((await sendOnce(p, { status: 200, body: { messages: [] } })).error!.message).toBe(
      'vonage error: Internal Error',
    );
  });

  test('a form body and no Authorization header (the credentials travel in the form); 5xx; timeout', async () => {
    const p = provider('vonage');
    const r = await sendOnce(p, { status: 200, body: { messages: [{ 'message-id': 'vn-4', status: '0' }] } });
    expect(r.req!.headers['content-type']).toBe(FORM);
    expect(r.req!.headers.authorization).toBeUndefined();
    // A 5xx is decoded like any answer, as GoTrue does: no messages is its "Internal Error".
    const down = await sendOnce(p, {
      status: 500,
      body: { type: 'https://developer.nexmo.com/api-errors#internal-error', title: 'Internal Error' },
    });
    expect(down.error!.message).toBe('vonage error: Internal Error');
    const html = await sendOnce(p, { status: 503, body: '<html>unavailable</html>' });
    expect(html.error!.message).toBe('Vonage answered HTTP 503 with a body that is not JSON');
    const slow = await sendOnce(provider('vonage', SHORT_TIMEOUT), 'hang');
    expect(slow.error!.message).toBe('request to Vonage failed: no answer within 300 ms');
  });
});

describe('configuration', () => {
  const CREDENTIALS: Record<string, Record<string, string>> = {
    twilio: { TWILIO_ACCOUNT_SID: 'AC1', TWILIO_AUTH_TOKEN: 't', TWILIO_MESSAGE_SERVICE_SID: 'MG1' },
    twilio_verify: {
      TWILIO_VERIFY_ACCOUNT_SID: 'AC1',
      TWILIO_VERIFY_AUTH_TOKEN: 't',
      TWILIO_VERIFY_MESSAGE_SERVICE_SID: 'VA1',
    },
    messagebird: { MESSAGEBIRD_ACCESS_KEY: 'k', MESSAGEBIRD_ORIGINATOR: 'Acme' },
    textlocal: { TEXTLOCAL_API_KEY: 'k', TEXTLOCAL_SENDER: 'TXTLCL' },
    vonage: { VONAGE_API_KEY: 'k', VONAGE_API_SECRET: 's', VONAGE_FROM: 'Acme' },
  };
  const needed = (name: string, v: string) =>
    `AUTHSVC_SMS_${v} (or GOTRUE_SMS_${v}) is required when SMS_PROVIDER is ${name}`;
  const withCreds = (name: string, creds: Record<string, string>) =>
    parseConfig({
      ...GOTRUE_ENV,
      GOTRUE_SMS_PROVIDER: name,
      ...Object.fromEntries(Object.entries(creds).map(([k, v]) => [`GOTRUE_SMS_${k}`, v])),
    });

  test.each(Object.keys(CREDENTIALS))(
    'SMS_PROVIDER=%s: each missing credential stops start-up by name; all given, it starts',
    (name) => {
      const all = CREDENTIALS[name]!;
      const none = withCreds(name, {});
      expect(none.ok).toBe(false);
      expect(!none.ok && none.errors).toEqual(Object.keys(all).map((v) => needed(name, v)));
      for (const missing of Object.keys(all)) {
        const r = withCreds(name, Object.fromEntries(Object.entries(all).filter(([k]) => k !== missing)));
        expect(!r.ok && r.errors).toEqual([needed(name, missing)]);
      }
      const ok = withCreds(name, all);
      expect(ok.ok).toBe(true);
      // Each provider asks for its own: these satisfy no other.
      expect(Object.keys(CREDENTIALS).filter((other) => other !== name && withCreds(other, all).ok)).toEqual([]);
    },
  );

  test("the chosen provider's missing credentials stop start-up, each by name", () => {
    const r = parseConfig({ ...GOTRUE_ENV, GOTRUE_SMS_PROVIDER: 'vonage', GOTRUE_SMS_VONAGE_API_KEY: 'k' });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors).toEqual([
      'AUTHSVC_SMS_VONAGE_API_SECRET (or GOTRUE_SMS_VONAGE_API_SECRET) is required when SMS_PROVIDER is vonage',
      'AUTHSVC_SMS_VONAGE_FROM (or GOTRUE_SMS_VONAGE_FROM) is required when SMS_PROVIDER is vonage',
    ]);
  });

  test("base URLs default to the public APIs (Textlocal: GoTrue's India host); INTERNAL_HTTP_TIMEOUT defaults to 10 s", () => {
    const r = parseConfig(GOTRUE_ENV);
    if (!r.ok) throw new Error(r.errors.join('\n'));
    const s = r.config.sms;
    expect([
      s.twilio.baseUrl,
      s.twilioVerify.baseUrl,
      s.messagebird.baseUrl,
      s.textlocal.baseUrl,
      s.vonage.baseUrl,
    ]).toEqual([
      'https://api.twilio.com',
      'https://verify.twilio.com',
      'https://rest.messagebird.com',
      'https://api.textlocal.in',
      'https://rest.nexmo.com',
    ]);
    expect(s.httpTimeout).toBe(10);
    expect(createSmsProvider(s, fetch)).toBeUndefined();
  });
});

describe('end to end: the configured provider carries the code', () => {
  test('phone signup through the app sends Twilio the code that then verifies', async () => {
    const { openTestDb } = await import('../helpers/db.ts');
    const { buildTestApp } = await import('../helpers/app.ts');
    const db = await openTestDb();
    try {
      const t = await buildTestApp(db, {
        AUTHSVC_EXTERNAL_PHONE_ENABLED: 'true',
        AUTHSVC_SMS_PROVIDER: 'twilio',
        AUTHSVC_SMS_TWILIO_BASE_URL: base,
        AUTHSVC_SMS_TWILIO_ACCOUNT_SID: 'AC123',
        AUTHSVC_SMS_TWILIO_AUTH_TOKEN: SECRETS.token,
        AUTHSVC_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
        AUTHSVC_SMS_TEMPLATE: 'Code {{ .Code }} for Acme',
      });
      seen.length = 0;
      next = { status: 201, body: { sid: 'SM-e2e', status: 'queued' } };
      const res = await t.request('POST', '/signup', { phone: '+15550199', password: 'phone-pass-1' });
      expect(res.status).toBe(200);
      expect(seen).toHaveLength(1);
      const body = seen[0]!.form.Body!;
      expect(body).toMatch(/^Code \d{6} for Acme$/);
      const code = /\d{6}/.exec(body)![0];
      const v = await t.request('POST', '/verify', { type: 'sms', phone: '15550199', token: code });
      expect(v.status).toBe(200);

      next = {
        status: 400,
        body: {
          message: 'Permission to send an SMS has not been enabled',
          more_info: 'https://www.twilio.com/docs/errors/21408',
        },
      };
      const refused = await t.request('POST', '/signup', { phone: '+15550198', password: 'phone-pass-1' });
      expect(refused.status).toBe(422);
      const err = (await refused.json()) as Record<string, unknown>;
      expect(err.msg).toBe(
        'Error sending confirmation OTP to provider: Permission to send an SMS has not been enabled More information: https://www.twilio.com/docs/errors/21408',
      );
      expect(JSON.stringify(err)).not.toContain(SECRETS.token);
    } finally {
      await db.close();
    }
  });
});
