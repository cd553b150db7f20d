// The standard OpenTelemetry settings as the adapters read them (no SDK here).
import type { Config } from '../config/types.ts';

/** `k=v,k2=v2` with percent-encoded values (the OTEL_*_HEADERS and OTEL_RESOURCE_ATTRIBUTES syntax). */
export function parseKeyValues(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (raw ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    try {
      out[key] = decodeURIComponent(value);
    } catch {
      out[key] = value;
    }
  }
  return out;
}

/** OTEL_RESOURCE_ATTRIBUTES, then service.name (OTEL_SERVICE_NAME, default authsvc) and auth.version. */
export function resourceAttributes(config: Config, version: string): Record<string, string> {
  return {
    ...parseKeyValues(config.otel.resourceAttributes),
    'service.name': config.otel.serviceName || 'authsvc',
    'auth.version': version,
  };
}

/** The OTLP/HTTP URL of a signal: `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/<signal>`, undefined when unset. */
export function otlpSignalUrl(config: Config, signal: 'traces' | 'metrics'): string | undefined {
  const base = config.otel.exporterOtlpEndpoint?.replace(/\/+$/, '');
  return base ? `${base}/v1/${signal}` : undefined;
}
