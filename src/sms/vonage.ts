// Vonage SMS API (GoTrue: sms_provider/vonage.go): POST /sms/json with key and secret in the
// form; `type=unicode` only for text that is not ASCII. Success is `messages[0].status == "0"`.
import { postForm, str, trimBase } from './http.ts';
import type { SmsProvider } from './provider.ts';
import { SmsSendError } from './provider.ts';

export interface VonageConfig {
  apiKey: string;
  apiSecret: string;
  from: string;
  baseUrl: string;
}

export function createVonage(cfg: VonageConfig, fetch: typeof globalThis.fetch, timeoutMs: number): SmsProvider {
  return {
    name: 'vonage',
    supportsWhatsApp: false,
    verifiesCodes: false,
    async send(m, signal) {
      if (m.channel !== 'sms') throw new SmsSendError(`channel type "${m.channel}" is not supported for Vonage`);
      const fields: Record<string, string> = {
        from: cfg.from,
        to: m.phone,
        text: m.message,
        api_key: cfg.apiKey,
        api_secret: cfg.apiSecret,
      };
      if (/[^\x00-\x7f]/.test(m.message)) fields.type = 'unicode';
      const res = await postForm({
        fetch,
        url: `${trimBase(cfg.baseUrl)}/sms/json`,
        fields,
        timeoutMs,
        signal,
        provider: 'Vonage',
      });
      const messages = Array.isArray(res.body.messages) ? (res.body.messages as Array<Record<string, unknown>>) : [];
      const first = messages[0];
      if (!first) throw new SmsSendError('vonage error: Internal Error');
      const id = str(first['message-id']);
      if (str(first.status) !== '0') {
        throw new SmsSendError(
          `vonage error: ${str(first['error-text'])} (status: ${str(first.status)}) for message ${id}`,
        );
      }
      return id;
    },
  };
}
