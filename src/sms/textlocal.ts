// Textlocal (GoTrue: sms_provider/textlocal.go): POST /send with the API key in the form. The
// HTTP status is not looked at; `status: "success"` is. GoTrue's default host is the India one.
import { postForm, str, trimBase } from './http.ts';
import type { SmsProvider } from './provider.ts';
import { SmsSendError } from './provider.ts';

export interface TextlocalConfig {
  apiKey: string;
  sender: string;
  baseUrl: string;
}

const TEMPLATE_ERROR = 80;

export function createTextlocal(cfg: TextlocalConfig, fetch: typeof globalThis.fetch, timeoutMs: number): SmsProvider {
  return {
    name: 'textlocal',
    supportsWhatsApp: false,
    verifiesCodes: false,
    async send(m, signal) {
      if (m.channel !== 'sms') throw new SmsSendError(`channel type "${m.channel}" is not supported for TextLocal`);
      const res = await postForm({
        fetch,
        url: `${trimBase(cfg.baseUrl)}/send`,
        timeoutMs,
        signal,
        provider: 'Textlocal',
        fields: { sender: cfg.sender, apikey: cfg.apiKey, message: m.message, numbers: m.phone },
      });
      // GoTrue reads no message id on success (it stays ''), only on failure.
      if (res.body.status === 'success') return '';
      const messages = Array.isArray(res.body.messages) ? (res.body.messages as Array<Record<string, unknown>>) : [];
      const errors = Array.isArray(res.body.errors) ? (res.body.errors as Array<Record<string, unknown>>) : [];
      const id = str(messages[0]?.id);
      const first = errors[0];
      const code = first?.code;
      if (code === TEMPLATE_ERROR) {
        throw new SmsSendError(
          `textlocal error: ${str(first?.message)} (code: ${str(code)}) template message: ${m.message}`,
        );
      }
      throw new SmsSendError(`textlocal error: ${str(first?.message)} (code: ${str(code)}) message ${id}`);
    },
  };
}
