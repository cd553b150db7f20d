// Issue 16: authsvc encodes its spans itself (src/telemetry/otlp-trace-encoding.ts) as they end.
// What it sends must be exactly what the OpenTelemetry SDK's own serializers send for the same
// spans: the http/protobuf body byte for byte (ProtobufTraceSerializer), the http/json body as
// the same JSON document (JsonTraceSerializer). The spans are made by the real recorder
// (span-recorder.ts) and cover what an encoder can get wrong: root, local and remote parents,
// trace state, every attribute type (negative and large integers, doubles, arrays, byte arrays,
// non-ASCII and long strings), frozen (cached) attribute sets, events, links, error status,
// dropped counts, a second instrumentation scope, and messages longer than 127 bytes.
import { type Attributes, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, createTraceState, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, test } from 'vitest';
import { spanEncoder } from '../src/telemetry/otlp-trace-encoding.ts';
import { type FinishedSpan, SpanRecorder } from '../src/telemetry/span-recorder.ts';
import { decodeTraceProto } from './helpers/otlp-receiver.ts';

const RESOURCE: Attributes = { 'service.name': 'authsvc', 'auth.version': '1.2.3', 'deployment.environment': 'tëst' };

/** Epoch ms (possibly fractional) as the SDK's HrTime, with the encoder's rounding (truncated to the nanosecond). */
function hrTime(ms: number): [number, number] {
  const whole = Math.floor(ms);
  const ns = BigInt(whole) * 1_000_000n + BigInt(Math.trunc((ms - whole) * 1e6));
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

/** A recorded span as the SDK's ReadableSpan, for its serializers. */
function readable(s: FinishedSpan, resource: ReturnType<typeof resourceFromAttributes>): ReadableSpan {
  return {
    name: s.name, kind: s.kind,
    spanContext: () => ({ traceId: s.traceId, spanId: s.spanId, traceFlags: s.traceFlags, ...(s.traceState ? { traceState: s.traceState } : {}) }),
    parentSpanContext: s.parentSpanId ? { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: s.parentIsRemote } : undefined,
    startTime: hrTime(s.startTime), endTime: hrTime(s.endTime), duration: [0, 0], ended: true,
    status: { code: s.statusCode, ...(s.statusMessage ? { message: s.statusMessage } : {}) },
    attributes: s.attributes,
    links: s.links.map((l) => ({ context: l.context, attributes: l.attributes, droppedAttributesCount: 0 })),
    events: s.events.map((e) => ({ name: e.name, time: hrTime(e.time), attributes: e.attributes, droppedAttributesCount: e.droppedAttributesCount })),
    resource, instrumentationScope: s.scope,
    droppedAttributesCount: s.droppedAttributesCount, droppedEventsCount: s.droppedEventsCount, droppedLinksCount: s.droppedLinksCount,
  } as unknown as ReadableSpan;
}

/** Spans of every kind the encoder has to handle, in the order they ended. */
function recordSpans(): FinishedSpan[] {
  const ended: FinishedSpan[] = [];
  const recorder = new SpanRecorder({ sink: { onEnd: (s) => ended.push(s), forceFlush: async () => undefined, shutdown: async () => undefined } });
  const tracer = recorder.getTracer('authsvc');
  const t0 = 1_764_000_000_000;

  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true,
    traceState: createTraceState('vendor=abc,other=1'),
  });
  const server = tracer.startSpan('GET', {
    kind: SpanKind.SERVER, startTime: new Date(t0), attributes: { 'http.method': 'GET', request_id: 'req-1' },
  }, remote);
  const statement = Object.freeze({ 'db.system': 'postgresql', 'db.operation.name': 'SELECT', 'db.query.summary': 'SELECT users' });
  const parent = trace.setSpan(ROOT_CONTEXT, server);
  for (let i = 0; i < 2; i++) {
    const child = tracer.startSpan('authsvc_user_by_id', { kind: SpanKind.CLIENT, attributes: statement, startTime: t0 + 1.25 + i }, parent);
    child.end(t0 + 2.5 + i);
  }
  const hash = tracer.startSpan('password.hash', { startTime: t0 + 3 }, parent);
  hash.setStatus({ code: SpanStatusCode.ERROR, message: 'TypeError' });
  hash.end(t0 + 90.123456);
  server.setAttributes({
    'http.status_code': 200, 'http.route': '/admin/users/{user_id}', 'http.route.params.user_id': 'ünïcødé-✓',
    negative: -42, big: 2 ** 53 - 1, ratio: 0.25, flag: true, off: false, list: ['a', 'b'], numbers: [1, 2.5, -3],
    bytes: new Uint8Array([0, 1, 254, 255]) as unknown as string, long: 'x'.repeat(300),
  });
  server.addEvent('retry', { attempt: 2 }, t0 + 4);
  server.addLink({ context: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.NONE }, attributes: { why: 'follows' } });
  server.updateName('GET /admin/users/{user_id}');
  server.end(t0 + 100);

  const root = tracer.startSpan('rate_limit.sweep', { startTime: t0 + 200 });
  root.setStatus({ code: SpanStatusCode.OK });
  for (let i = 0; i < 130; i++) root.setAttribute(`k${i}`, i);
  root.end(t0 + 201);

  const other = recorder.getTracer('authsvc.other', '0.9.0');
  const o = other.startSpan('mail.send', { startTime: t0 + 300 }, parent);
  o.end(t0 + 305);
  return ended;
}

describe('OTLP span encoding', () => {
  test('http/protobuf: byte for byte what the SDK serializer writes, in one request or across two', () => {
    const spans = recordSpans();
    expect(spans.map((s) => s.name)).toEqual([
      'authsvc_user_by_id', 'authsvc_user_by_id', 'password.hash', 'GET /admin/users/{user_id}', 'rate_limit.sweep', 'mail.send',
    ]);
    const encoder = spanEncoder('http/protobuf', RESOURCE);
    expect(encoder.contentType).toBe('application/x-protobuf');
    for (const s of spans) encoder.add(s);
    expect(encoder.pending).toBe(6);
    const batch = encoder.take()!;
    expect(batch.length).toBe(6);
    expect(encoder.take()).toBeUndefined();
    const resource = resourceFromAttributes(RESOURCE);
    const sdk = ProtobufTraceSerializer.serializeRequest(spans.map((s) => readable(s, resource)))!;
    expect(Buffer.from(batch.body).toString('hex')).toBe(Buffer.from(sdk).toString('hex'));

    // A second batch from the same encoder (buffers reused, cached pieces) is again exact.
    for (const s of spans.slice(0, 3)) encoder.add(s);
    const again = encoder.take()!;
    expect(Buffer.from(again.body).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans.slice(0, 3).map((s) => readable(s, resource)))!))).toBe(true);

    // And it decodes to what was recorded.
    const decoded = decodeTraceProto(batch.body);
    const server = decoded.find((s) => s.name === 'GET /admin/users/{user_id}')!;
    expect(server.parentSpanId).toBe('b7ad6b7169203331');
    expect(server.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(server.attributes).toMatchObject({ 'http.route.params.user_id': 'ünïcødé-✓', negative: -42, ratio: 0.25, list: ['a', 'b'], long: 'x'.repeat(300) });
    expect(server.resource).toEqual(RESOURCE);
    expect(decoded.filter((s) => s.parentSpanId === server.spanId).map((s) => s.name)).toEqual([
      'authsvc_user_by_id', 'authsvc_user_by_id', 'password.hash', 'mail.send',
    ]);
  });

  test('http/json: the same document as the SDK JSON serializer', () => {
    const spans = recordSpans();
    const encoder = spanEncoder('http/json', RESOURCE);
    expect(encoder.contentType).toBe('application/json');
    for (const s of spans) encoder.add(s);
    const body = JSON.parse(new TextDecoder().decode(encoder.take()!.body)) as unknown;
    const resource = resourceFromAttributes(RESOURCE);
    const sdk = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans.map((s) => readable(s, resource)))!)) as unknown;
    expect(body).toEqual(sdk);
  });

  test('the recorded spans carry what the SDK would have recorded', () => {
    const spans = recordSpans();
    const root = spans.find((s) => s.name === 'rate_limit.sweep')!;
    expect(root.parentSpanId).toBe('');
    expect(Object.keys(root.attributes)).toHaveLength(128);
    expect(root.droppedAttributesCount).toBe(2);
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(server.parentIsRemote).toBe(true);
    expect(server.traceState?.serialize()).toBe('vendor=abc,other=1');
    for (const child of spans.filter((s) => s.name === 'authsvc_user_by_id')) {
      expect(child.parentSpanId).toBe(server.spanId);
      expect(child.parentIsRemote).toBe(false);
      expect(child.traceId).toBe(server.traceId);
    }
  });
});
