// Logs, traces and metrics (LOG_*, TRACING_*, METRICS_*, OTEL_*).
import { bool, opt, text, textOr, withDefault, setting } from '../setting.ts';
import { integer, logLevel, oneOf } from '../values.ts';

export const telemetry = {
  log: {
    level: setting('LOG_LEVEL', withDefault(logLevel, 'info'), 'info', 'panic, fatal, error, warn, info or debug.'),
    file: setting('LOG_FILE', text(), '', 'Path of a log file.'),
    format: setting(
      'LOG_FORMAT',
      opt(oneOf(['json', 'text'])),
      'json (text on a terminal in local mode)',
      'json: one JSON object per line; text: one readable line (time, level, message, key=value fields). authsvc only.',
    ),
  },
  tracing: {
    enabled: setting('TRACING_ENABLED', bool(false), 'false', 'Enables trace export.'),
    exporter: setting(
      'TRACING_EXPORTER',
      withDefault(oneOf(['opentelemetry']), 'opentelemetry'),
      'opentelemetry',
      'Only opentelemetry is supported.',
    ),
  },
  metrics: {
    enabled: setting('METRICS_ENABLED', bool(false), 'false', 'Enables metrics export.'),
    exporter: setting(
      'METRICS_EXPORTER',
      withDefault(oneOf(['opentelemetry', 'prometheus']), 'opentelemetry'),
      'opentelemetry',
      'opentelemetry or prometheus.',
    ),
    prometheusHost: setting(
      'OTEL_EXPORTER_PROMETHEUS_HOST',
      textOr('0.0.0.0'),
      '0.0.0.0',
      'Address the prometheus exporter listens on.',
    ),
    prometheusPort: setting(
      'OTEL_EXPORTER_PROMETHEUS_PORT',
      withDefault(integer(0, 65535), 9100),
      '9100',
      'Port of the prometheus exporter (metrics at /).',
    ),
  },
  otel: {
    resourceAttributes: setting('OTEL_RESOURCE_ATTRIBUTES', text(), '', 'Custom OpenTelemetry resource attributes.'),
    serviceName: setting('OTEL_SERVICE_NAME', text(), '', 'OpenTelemetry service name.'),
    exporterOtlpEndpoint: setting('OTEL_EXPORTER_OTLP_ENDPOINT', text(), '', 'OTLP collector endpoint.'),
    exporterOtlpProtocol: setting('OTEL_EXPORTER_OTLP_PROTOCOL', text(), '', 'OTLP protocol.'),
    exporterOtlpHeaders: setting('OTEL_EXPORTER_OTLP_HEADERS', text(), '', 'Headers sent to the OTLP collector.', {
      secret: true,
    }),
  },
  debug: setting('DEBUG', bool(false), 'false', 'More diagnostics from the telemetry SDK.'),
};
