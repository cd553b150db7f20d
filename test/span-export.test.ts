// BatchingSpanSink (src/telemetry/span-export.ts) fed by a SpanRecorder, encoding with spanEncoder
// (src/telemetry/otlp-trace-encoding.ts): full batches are sent on a later turn (never inside
// end()), partial ones after scheduledDelayMillis or on forceFlush(); the queue limit drops the
// excess; forceFlush() waits for slow sends and survives failed ones; nothing is sent after
// shutdown(); each batch's `length` matches the spans in its body, which carries the resource.
// Bodies are read back as OTLP/JSON, and as protobuf with the test receiver's decoder.
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { type BatchOptions, BatchingSpanSink } from '../src/telemetry/span-export.ts';
import { type EncodedBatch, type OtlpProtocol, spanEncoder } from '../src/telemetry/otlp-trace-encoding.ts';
import { SpanRecorder } from '../src/telemetry/span-recorder.ts';
import { decodeTraceProto } from './helpers/otlp-receiver.ts';

const RESOURCE = { 'service.name': 't', 'service.version': '1.2.3' };

interface JsonBody {
  resourceSpans: {
    resource: { attributes: { key: string; value: Record<string, unknown> }[] };
    scopeSpans: { scope: { name: string }; spans: { name: string; attributes: { key: string }[] }[] }[];
  }[];
}

const parse = (batch: EncodedBatch) => JSON.parse(new TextDecoder().decode(batch.body)) as JsonBody;
const spanCount = (batch: EncodedBatch) => parse(batch).resourceSpans[0]!.scopeSpans.reduce((n, ss) => n + ss.spans.length, 0);
const spanNames = (batch: EncodedBatch) => parse(batch).resourceSpans[0]!.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.name));

function setup(opts: Partial<BatchOptions>, send?: (batch: EncodedBatch) => Promise<void>, protocol: OtlpProtocol = 'http/json') {
  const sent: EncodedBatch[] = [];
  const sink = new BatchingSpanSink(spanEncoder(protocol, RESOURCE), send ?? (async (b) => { sent.push(b); }), {
    scheduledDelayMillis: 60_000, maxQueueSize: 2048, maxExportBatchSize: 512, ...opts,
  });
  const tracer = new SpanRecorder({ sink }).getTracer('authsvc');
  const endSpans = (n: number, prefix = 'span') => {
    for (let i = 0; i < n; i++) tracer.startSpan(`${prefix}-${i}`, { attributes: { i } }, ROOT_CONTEXT).end();
  };
  return { sent, sink, tracer, endSpans };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('batching', () => {
  test('full batches go out on a later turn, the rest on forceFlush', async () => {
    const { sent, sink, endSpans } = setup({ maxExportBatchSize: 10 });
    endSpans(25);
    expect(sent).toHaveLength(0); // not from inside end()
    await vi.waitFor(() => expect(sent).toHaveLength(2), { timeout: 2000, interval: 5 });
    await new Promise((r) => setTimeout(r, 30));
    expect(sent).toHaveLength(2); // the last 5 wait for the (long) scheduled delay
    await sink.forceFlush();
    expect(sent).toHaveLength(3);
    expect(sent.map((b) => b.length)).toEqual([10, 10, 5]);
    expect(sent.map(spanCount)).toEqual([10, 10, 5]);
    expect(sent.flatMap(spanNames)).toEqual(Array.from({ length: 25 }, (_, i) => `span-${i}`));
    for (const batch of sent) {
      const doc = parse(batch);
      expect(doc.resourceSpans).toHaveLength(1);
      expect(doc.resourceSpans[0]!.resource.attributes).toEqual([
        { key: 'service.name', value: { stringValue: 't' } },
        { key: 'service.version', value: { stringValue: '1.2.3' } },
      ]);
      expect(doc.resourceSpans[0]!.scopeSpans[0]!.scope.name).toBe('authsvc');
    }
    await sink.forceFlush();
    expect(sent).toHaveLength(3); // nothing left: no empty batch
  });

  test('a partial batch is sent after scheduledDelayMillis without forceFlush', async () => {
    vi.useFakeTimers();
    const { sent, sink, endSpans } = setup({ maxExportBatchSize: 100, scheduledDelayMillis: 50 });
    endSpans(3);
    await vi.advanceTimersByTimeAsync(40);
    expect(sent).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(20);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.length).toBe(3);
    expect(spanCount(sent[0]!)).toBe(3);

    // The timer starts again with the next span.
    endSpans(2, 'later');
    await vi.advanceTimersByTimeAsync(60);
    expect(sent.map((b) => b.length)).toEqual([3, 2]);
    expect(spanNames(sent[1]!)).toEqual(['later-0', 'later-1']);

    // And after a forceFlush that cancelled a pending timer.
    endSpans(1, 'flushed');
    await vi.advanceTimersByTimeAsync(10);
    await sink.forceFlush();
    expect(sent.map((b) => b.length)).toEqual([3, 2, 1]);
    endSpans(1, 'timed');
    await vi.advanceTimersByTimeAsync(60);
    expect(sent.map((b) => b.length)).toEqual([3, 2, 1, 1]);
    expect(spanNames(sent[3]!)).toEqual(['timed-0']);
  });

  test('beyond maxQueueSize spans are dropped', async () => {
    const { sent, sink, endSpans } = setup({ maxQueueSize: 5, maxExportBatchSize: 100 });
    endSpans(8);
    await sink.forceFlush();
    expect(sent.map((b) => b.length)).toEqual([5]);
    expect(spanNames(sent[0]!)).toEqual(['span-0', 'span-1', 'span-2', 'span-3', 'span-4']);

    // Once sent, the queue has room again.
    endSpans(3, 'again');
    await sink.forceFlush();
    expect(sent.map((b) => b.length)).toEqual([5, 3]);
  });

  test('non-sampled spans never reach the sink', async () => {
    const sent: EncodedBatch[] = [];
    const sink = new BatchingSpanSink(spanEncoder('http/json', RESOURCE), async (b) => { sent.push(b); },
      { scheduledDelayMillis: 60_000, maxQueueSize: 100, maxExportBatchSize: 100 });
    const tracer = new SpanRecorder({ sink }).getTracer('authsvc');
    const unsampled = trace.setSpanContext(ROOT_CONTEXT, { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 0, isRemote: true });
    tracer.startSpan('dropped', {}, unsampled).end();
    tracer.startSpan('kept', {}, ROOT_CONTEXT).end();
    await sink.forceFlush();
    expect(sent.flatMap(spanNames)).toEqual(['kept']);
  });
});

describe('forceFlush and shutdown', () => {
  test('forceFlush waits for a slow send', async () => {
    let finished = false;
    const lengths: number[] = [];
    const { sink, endSpans } = setup({}, (b) => new Promise<void>((resolve) => {
      lengths.push(b.length);
      setTimeout(() => { finished = true; resolve(); }, 50);
    }));
    endSpans(4);
    await sink.forceFlush();
    expect(lengths).toEqual([4]);
    expect(finished).toBe(true);
  });

  test('a failed send does not make forceFlush reject, nor stop later sends', async () => {
    let calls = 0;
    const lengths: number[] = [];
    const { sink, endSpans } = setup({}, async (b) => {
      calls++;
      if (calls === 1) throw new Error('collector down');
      lengths.push(b.length);
    });
    endSpans(2);
    await expect(sink.forceFlush()).resolves.toBeUndefined();
    expect(calls).toBe(1);
    endSpans(3);
    await sink.forceFlush();
    expect(calls).toBe(2);
    expect(lengths).toEqual([3]);
  });

  test('shutdown sends what is pending; spans ended afterwards are not sent', async () => {
    vi.useFakeTimers();
    const { sent, sink, endSpans } = setup({ scheduledDelayMillis: 50, maxExportBatchSize: 2 });
    endSpans(3, 'before');
    await sink.shutdown();
    expect(sent.flatMap(spanNames)).toEqual(['before-0', 'before-1', 'before-2']);

    endSpans(5, 'after'); // would fill two batches and start the timer, were the sink open
    await vi.advanceTimersByTimeAsync(200);
    await sink.forceFlush();
    expect(sent.flatMap(spanNames)).toEqual(['before-0', 'before-1', 'before-2']);
  });
});

describe('http/protobuf', () => {
  test('the body decodes to the spans, their attributes and the resource', async () => {
    const { sent, sink, tracer } = setup({}, undefined, 'http/protobuf');
    const parent = tracer.startSpan('POST /token', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST' } }, ROOT_CONTEXT);
    const child = tracer.startSpan('db.query', { kind: SpanKind.CLIENT }, trace.setSpan(ROOT_CONTEXT, parent));
    child.setAttributes({ 'db.rows': 3, 'db.cached': false, 'db.tables': ['users', 'sessions'], 'db.ratio': 0.25 });
    child.end();
    parent.setAttribute('http.response.status_code', 200);
    parent.end();
    await sink.forceFlush();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.length).toBe(2);

    const spans = decodeTraceProto(sent[0]!.body);
    expect(spans.map((s) => s.name)).toEqual(['db.query', 'POST /token']);
    const [db, http] = spans;
    expect(db!.attributes).toEqual({ 'db.rows': 3, 'db.cached': false, 'db.tables': ['users', 'sessions'], 'db.ratio': 0.25 });
    expect(http!.attributes).toEqual({ 'http.request.method': 'POST', 'http.response.status_code': 200 });
    for (const s of spans) expect(s.resource).toEqual(RESOURCE);
    // OTLP's SpanKind is the API's plus one.
    expect(db!.kind).toBe(SpanKind.CLIENT + 1);
    expect(http!.kind).toBe(SpanKind.SERVER + 1);
    expect(http!.traceId).toBe(parent.spanContext().traceId);
    expect(http!.spanId).toBe(parent.spanContext().spanId);
    expect(http!.parentSpanId).toBe('');
    expect(db!.traceId).toBe(parent.spanContext().traceId);
    expect(db!.spanId).toBe(child.spanContext().spanId);
    expect(db!.parentSpanId).toBe(parent.spanContext().spanId);
  });
});
