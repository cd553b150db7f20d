// The OpenTelemetry SDK on Node, Bun and Deno: loaded (dynamic import from node.ts) only when
// TRACING_ENABLED or METRICS_ENABLED is true, so a default start loads none of it.
// Configured by the standard variables only: OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_EXPORTER_OTLP_{,TRACES_,METRICS_}{ENDPOINT,PROTOCOL,HEADERS}, OTEL_METRIC_EXPORT_INTERVAL,
// OTEL_EXPORTER_PROMETHEUS_HOST/PORT, OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_*.
import { metrics, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, type MetricReader, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Config } from '../config/types.ts';
import type { Logger } from '../telemetry/logger.ts';
import { otlpSignalUrl, parseKeyValues, resourceAttributes } from '../telemetry/otel-config.ts';
import { otelDiagnostics } from '../telemetry/otel-diagnostics.ts';
import { registerRuntimeMetrics } from './runtime-metrics.ts';

export interface Telemetry {
  /** Exports what is pending, then stops the exporters and the Prometheus listener. */
  shutdown(): Promise<void>;
}

type Env = Record<string, string | undefined>;

export function telemetryResource(config: Config, version: string): Resource {
  return resourceFromAttributes(resourceAttributes(config, version));
}

interface Otlp {
  url?: string;
  protocol: string;
  headers: Record<string, string>;
}

/** The signal's OTLP settings: the signal-specific variable first, then the general one. */
function otlpSettings(config: Config, env: Env, signal: 'traces' | 'metrics'): Otlp {
  const s = signal.toUpperCase();
  return {
    url: env[`OTEL_EXPORTER_OTLP_${s}_ENDPOINT`] || otlpSignalUrl(config, signal),
    protocol: env[`OTEL_EXPORTER_OTLP_${s}_PROTOCOL`] || config.otel.exporterOtlpProtocol || 'http/protobuf',
    headers: {
      ...parseKeyValues(config.otel.exporterOtlpHeaders),
      ...parseKeyValues(env[`OTEL_EXPORTER_OTLP_${s}_HEADERS`]),
    },
  };
}

function checkProtocol(o: Otlp, logger: Logger): void {
  if (o.protocol !== 'http/protobuf' && o.protocol !== 'http/json') {
    logger.warn(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${o.protocol} is not supported (http/protobuf or http/json): using http/protobuf`,
    );
    o.protocol = 'http/protobuf';
  }
}

async function metricReader(config: Config, env: Env, logger: Logger): Promise<MetricReader> {
  if (config.metrics.exporter === 'prometheus') {
    const { PrometheusExporter } = await import('@opentelemetry/exporter-prometheus');
    const reader = new PrometheusExporter({
      host: config.metrics.prometheusHost,
      port: config.metrics.prometheusPort,
      endpoint: '/',
      preventServerStart: true,
    });
    await reader.startServer();
    logger.info(
      `metrics: prometheus exporter on http://${config.metrics.prometheusHost}:${config.metrics.prometheusPort}/`,
    );
    return reader;
  }
  const o = otlpSettings(config, env, 'metrics');
  checkProtocol(o, logger);
  const opts = { url: o.url, headers: o.headers };
  const exporter =
    o.protocol === 'http/json'
      ? new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter(opts)
      : new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter(opts);
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL) || 60_000;
  return new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: interval,
    exportTimeoutMillis: Math.min(30_000, interval),
  });
}

/** OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG, as the SDK's samplers; the default is parentbased_always_on (every request). */
function sampler(env: Env, logger: Logger): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim().toLowerCase();
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  const root: Record<string, () => Sampler> = {
    always_on: () => new AlwaysOnSampler(),
    always_off: () => new AlwaysOffSampler(),
    traceidratio: () => new TraceIdRatioBasedSampler(ratio),
  };
  const parented = name.startsWith('parentbased_');
  const make = root[parented ? name.slice('parentbased_'.length) : name];
  if (!make) {
    logger.warn(`OTEL_TRACES_SAMPLER=${name} is not supported: using parentbased_always_on`);
    return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
  return parented ? new ParentBasedSampler({ root: make() }) : make();
}

const positive = (v: string | undefined): number | undefined => (v && Number(v) > 0 ? Number(v) : undefined);

/** A collector URL for the log: no user name or password. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(an invalid URL)';
  }
}

/** OTEL_EXPORTER_OTLP_{TRACES_,}COMPRESSION=gzip, read here so a value from .env counts too. */
function gzip(env: Env): boolean {
  return (
    (env.OTEL_EXPORTER_OTLP_TRACES_COMPRESSION || env.OTEL_EXPORTER_OTLP_COMPRESSION)?.trim().toLowerCase() === 'gzip'
  );
}

/**
 * The SDK's tracer provider, BatchSpanProcessor (OTEL_BSP_*) and OTLP/HTTP exporter
 * (http/protobuf or http/json; URL, headers, compression, timeout from the standard variables).
 * No context manager: child spans get their parent passed (telemetry/tracing.ts).
 */
async function sdkTracerProvider(o: Otlp, env: Env, resource: Resource, sampler: Sampler): Promise<TracerProvider> {
  const { OTLPTraceExporter } =
    o.protocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto');
  type Options = NonNullable<ConstructorParameters<typeof OTLPTraceExporter>[0]>;
  const timeout = positive(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT || env.OTEL_EXPORTER_OTLP_TIMEOUT);
  const exporter: SpanExporter = new OTLPTraceExporter({
    url: o.url,
    headers: o.headers,
    ...(gzip(env) ? { compression: 'gzip' as Options['compression'] } : {}),
    ...(timeout ? { timeoutMillis: timeout } : {}),
  });
  const maxQueueSize = positive(env.OTEL_BSP_MAX_QUEUE_SIZE) ?? 2048;
  const processor = new BatchSpanProcessor({
    exporter,
    maxQueueSize,
    maxExportBatchSize: Math.min(positive(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE) ?? 512, maxQueueSize),
    scheduledDelayMillis: positive(env.OTEL_BSP_SCHEDULE_DELAY) ?? 5000,
    exportTimeoutMillis: positive(env.OTEL_BSP_EXPORT_TIMEOUT) ?? 30_000,
  });
  return new TracerProvider({ resource, sampler, spanProcessors: [processor] });
}

export async function startNodeTelemetry(
  config: Config,
  env: Env,
  logger: Logger,
  version: string,
): Promise<Telemetry> {
  const headerValues = [
    config.otel.exporterOtlpHeaders,
    env.OTEL_EXPORTER_OTLP_TRACES_HEADERS,
    env.OTEL_EXPORTER_OTLP_METRICS_HEADERS,
  ].flatMap((h) => Object.values(parseKeyValues(h)));
  otelDiagnostics(logger, headerValues, config.debug);
  const resource = telemetryResource(config, version);
  const parts: { shutdown(): Promise<void> }[] = [];
  if (config.tracing.enabled) {
    const o = otlpSettings(config, env, 'traces');
    checkProtocol(o, logger);
    const provider = await sdkTracerProvider(o, env, resource, sampler(env, logger));
    // No context manager: child spans get their parent passed (telemetry/tracing.ts).
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
    parts.push(provider);
    logger.info(
      `tracing: OTLP ${o.protocol} to ${o.url ? withoutCredentials(o.url) : 'the exporter default (OTEL_EXPORTER_OTLP_ENDPOINT or localhost:4318)'}`,
    );
  }
  if (config.metrics.enabled) {
    const provider = new MeterProvider({ resource, readers: [await metricReader(config, env, logger)] });
    metrics.setGlobalMeterProvider(provider);
    registerRuntimeMetrics(provider.getMeter('authsvc.runtime'));
    parts.push(provider);
  }
  return {
    async shutdown() {
      await Promise.all(
        parts.map((p) =>
          p.shutdown().catch((err: unknown) => logger.warn('telemetry shutdown failed', { error: String(err) })),
        ),
      );
    },
  };
}
