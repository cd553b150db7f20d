// A Worker for test/runtime/smtp-tls.test.ts: POST the options of createWorkerSmtpTransport as JSON and it
// sends one message through worker-mailer on cloudflare:sockets, answering { ok } or the error.
import { type WorkerSmtpOptions, createWorkerSmtpTransport } from '../../src/adapters/workers-smtp.ts';

export default {
  async fetch(request: Request): Promise<Response> {
    const opts = (await request.json()) as WorkerSmtpOptions;
    try {
      await createWorkerSmtpTransport(opts).deliver({
        from: 'auth@example.com',
        to: 'user@example.com',
        subject: 'Hello',
        html: '<p>Hello</p>',
        text: 'Hello',
      });
      return Response.json({ ok: true });
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      return Response.json({ ok: false, name: e.name, message: e.message });
    }
  },
};
