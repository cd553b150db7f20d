// The OpenTelemetry SDK's own diagnostics (diag) through our logger: a failed export, spans
// dropped from a full queue (OTEL_BSP_MAX_QUEUE_SIZE), and with DEBUG=true everything. The values
// of the exporter headers (collector keys) are blanked wherever they would appear.
import { DiagLogLevel, diag } from '@opentelemetry/api';
import type { Logger } from './logger.ts';

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Routes diag to `logger` at `debug` (everything) or else warnings and errors only. */
export function otelDiagnostics(logger: Logger, secrets: readonly string[], debug: boolean): void {
  const hidden = secrets.filter((v) => v.length > 0);
  const scrub = (msg: string, args: unknown[]) => {
    let text = [
      msg,
      ...args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : safeJson(a))),
    ].join(' ');
    for (const s of hidden) text = text.split(s).join('[redacted]');
    return text;
  };
  const at =
    (level: 'error' | 'warn' | 'info' | 'debug') =>
    (msg: string, ...args: unknown[]) =>
      logger[level](`otel: ${scrub(msg, args)}`);
  diag.setLogger(
    { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), verbose: at('debug') },
    { logLevel: debug ? DiagLogLevel.DEBUG : DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}
