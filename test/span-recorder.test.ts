// SpanRecorder (src/telemetry/span-recorder.ts), the tracer provider that replaces the SDK's tracer:
// span and trace ids, parents (local and remote, with their trace state), the sampler's decision
// checked against the SDK's own samplers for the same inputs (NOT_RECORD / RECORD /
// RECORD_AND_SAMPLED, and only sampled spans reaching the sink), attribute handling (the caller's
// object never written, null values dropped, the 128 limit with a dropped count), no change after
// end(), status precedence, start/end times and kinds, events, exceptions, links and
// startActiveSpan. Spans are collected by a sink that pushes each FinishedSpan into an array.
import {
  type Context, ROOT_CONTEXT, type Span, type SpanContext, SpanKind, SpanStatusCode, TraceFlags, createTraceState, trace,
} from '@opentelemetry/api';
import {
  AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, type Sampler as SdkSampler, TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';
import { describe, expect, test } from 'vitest';
import {
  type FinishedSpan, NOT_RECORD, RECORD, RECORD_AND_SAMPLED, type Sampler, SpanRecorder, type SpanRecorderOptions,
} from '../src/telemetry/span-recorder.ts';

function setup(opts: Omit<SpanRecorderOptions, 'sink'> = {}) {
  const finished: FinishedSpan[] = [];
  const recorder = new SpanRecorder({ ...opts, sink: { onEnd: (s) => finished.push(s), forceFlush: async () => {}, shutdown: async () => {} } });
  return { finished, recorder, tracer: recorder.getTracer('authsvc') };
}

const randomHex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');

function remoteParent(sampled: boolean, traceState?: string): Context {
  const sc: SpanContext = {
    traceId: randomHex(16), spanId: randomHex(8), traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true,
    ...(traceState ? { traceState: createTraceState(traceState) } : {}),
  };
  return trace.setSpanContext(ROOT_CONTEXT, sc);
}

/** Starts and ends one span, and says what became of it. */
function outcome(tracer: ReturnType<SpanRecorder['getTracer']>, finished: FinishedSpan[], parent: Context) {
  const span = tracer.startSpan('op', {}, parent);
  const recording = span.isRecording();
  const before = finished.length;
  span.end();
  const decision = !recording ? NOT_RECORD : finished.length > before ? RECORD_AND_SAMPLED : RECORD;
  return { span, decision };
}

describe('ids and parents', () => {
  test('root spans get valid, unique ids', () => {
    const { tracer } = setup();
    const traceIds = new Set<string>();
    const spanIds = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const { traceId, spanId } = tracer.startSpan('root', {}, ROOT_CONTEXT).spanContext();
      expect(traceId).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
      expect(spanId).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
      traceIds.add(traceId);
      spanIds.add(spanId);
    }
    expect(traceIds.size).toBe(1000);
    expect(spanIds.size).toBe(1000);
  });

  test('a child of a local span shares its trace and names it as a local parent', () => {
    const { tracer, finished } = setup();
    const parent = tracer.startSpan('parent', {}, ROOT_CONTEXT);
    tracer.startSpan('child', {}, trace.setSpan(ROOT_CONTEXT, parent)).end();
    parent.end();
    const [child, root] = finished;
    expect(root!.parentSpanId).toBe('');
    expect(root!.parentIsRemote).toBeUndefined();
    expect(child!.traceId).toBe(parent.spanContext().traceId);
    expect(child!.parentSpanId).toBe(parent.spanContext().spanId);
    expect(child!.parentIsRemote).toBe(false);
    expect(child!.spanId).not.toBe(parent.spanContext().spanId);
  });

  test('a child of a remote parent keeps its trace id and trace state', () => {
    const { tracer, finished } = setup();
    const ctx = remoteParent(true, 'vendor=abc,other=1');
    const parent = trace.getSpanContext(ctx)!;
    const span = tracer.startSpan('server', { kind: SpanKind.SERVER }, ctx);
    expect(span.spanContext().traceState?.serialize()).toBe('vendor=abc,other=1');
    span.end();
    expect(finished).toHaveLength(1);
    expect(finished[0]!.traceId).toBe(parent.traceId);
    expect(finished[0]!.parentSpanId).toBe(parent.spanId);
    expect(finished[0]!.parentIsRemote).toBe(true);
    expect(finished[0]!.traceState?.get('vendor')).toBe('abc');
  });
});

describe('sampling', () => {
  test('the default sampler samples roots, follows remote parents and sampled local parents', () => {
    const { tracer, finished } = setup();
    expect(outcome(tracer, finished, ROOT_CONTEXT).decision).toBe(RECORD_AND_SAMPLED);

    const unsampled = remoteParent(false, 'k=v');
    const span = tracer.startSpan('x', {}, unsampled);
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe(trace.getSpanContext(unsampled)!.traceId);
    expect(span.spanContext().traceState?.serialize()).toBe('k=v');
    expect(span.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(0);
    span.end();
    expect(finished).toHaveLength(1); // the root above only

    const local = tracer.startSpan('local', {}, ROOT_CONTEXT);
    const child = outcome(tracer, finished, trace.setSpan(ROOT_CONTEXT, local));
    expect(child.decision).toBe(RECORD_AND_SAMPLED);
    expect(child.span.spanContext().traceId).toBe(local.spanContext().traceId);
  });

  const configs: [string, () => SdkSampler, boolean][] = [
    ['ParentBased(AlwaysOn)', () => new ParentBasedSampler({ root: new AlwaysOnSampler() }), true],
    ['ParentBased(AlwaysOff)', () => new ParentBasedSampler({ root: new AlwaysOffSampler() }), true],
    ['ParentBased(TraceIdRatio 0.5)', () => new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.5) }), true],
    ['ParentBased(TraceIdRatio 0.5), not flagged parent-based', () => new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.5) }), false],
    ['TraceIdRatio 0.5', () => new TraceIdRatioBasedSampler(0.5), false],
    ['AlwaysOn', () => new AlwaysOnSampler(), false],
    ['AlwaysOff', () => new AlwaysOffSampler(), false],
  ];

  test.each(configs)('%s: the recorder decides as the SDK sampler does', (name, make, parentBased) => {
    const sampler = make();
    const { tracer, finished } = setup({ sampler: sampler as Sampler, parentBased });
    // Local parents come from a recorder of their own: one sampled, one recorded but not sampled.
    const parents = setup();
    const recordOnly = setup({ sampler: { shouldSample: () => ({ decision: RECORD }) } });
    const seen = new Set<string>();
    for (let i = 0; i < 64; i++) {
      const localSampled = parents.tracer.startSpan('p', {}, ROOT_CONTEXT);
      const localUnsampled = recordOnly.tracer.startSpan('p', {}, ROOT_CONTEXT);
      const cases: [string, Context][] = [
        ['none', ROOT_CONTEXT], ['remote sampled', remoteParent(true)], ['remote not sampled', remoteParent(false)],
        ['local sampled', trace.setSpan(ROOT_CONTEXT, localSampled)], ['local not sampled', trace.setSpan(ROOT_CONTEXT, localUnsampled)],
      ];
      for (const [parentKind, ctx] of cases) {
        const { span, decision } = outcome(tracer, finished, ctx);
        const expected = sampler.shouldSample(ctx, span.spanContext().traceId, 'op', SpanKind.INTERNAL, {}, []).decision;
        expect({ parentKind, decision }).toEqual({ parentKind, decision: expected });
        seen.add(`${parentKind}:${decision}`);
      }
    }
    // The ratio samplers must have gone both ways on root spans (64 tries at 0.5).
    if (name.includes('TraceIdRatio')) {
      expect(seen).toContain(`none:${NOT_RECORD}`);
      expect(seen).toContain(`none:${RECORD_AND_SAMPLED}`);
    }
  });

  test('RECORD: a recording span that is not handed to the sink', () => {
    const { tracer, finished } = setup({ sampler: { shouldSample: () => ({ decision: RECORD }) } });
    const span = tracer.startSpan('recorded', {}, ROOT_CONTEXT);
    expect(span.isRecording()).toBe(true);
    expect(span.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(0);
    span.setAttribute('a', 1);
    span.end();
    expect(span.isRecording()).toBe(false);
    expect(finished).toHaveLength(0);
  });
});

describe('attributes', () => {
  test('from the start, setAttribute and setAttributes; null and undefined dropped; the caller\'s object untouched', () => {
    const { tracer, finished } = setup();
    const attributes = Object.freeze({ 'a.start': 'x', 'a.num': 1 });
    const span = tracer.startSpan('attrs', { attributes }, ROOT_CONTEXT);
    span.setAttribute('b.one', true);
    span.setAttributes({ 'c.list': ['p', 'q'], 'c.null': null as unknown as string, 'c.undef': undefined });
    span.setAttribute('d.undef', undefined as unknown as string);
    span.setAttribute('a.num', 2);
    span.end();
    expect(finished[0]!.attributes).toStrictEqual({ 'a.start': 'x', 'a.num': 2, 'b.one': true, 'c.list': ['p', 'q'] });
    expect(finished[0]!.droppedAttributesCount).toBe(0);
    expect(attributes).toEqual({ 'a.start': 'x', 'a.num': 1 });

    const mutable: Record<string, string | null | undefined> = { keep: 'k', gone: null, none: undefined };
    const other = tracer.startSpan('attrs2', { attributes: mutable as Record<string, string> }, ROOT_CONTEXT);
    other.setAttribute('added', 'v');
    other.end();
    expect(finished[1]!.attributes).toStrictEqual({ keep: 'k', added: 'v' });
    expect(mutable).toStrictEqual({ keep: 'k', gone: null, none: undefined });

    // Dropped at the start too, with no setAttribute to follow.
    tracer.startSpan('attrs3', { attributes: mutable as Record<string, string> }, ROOT_CONTEXT).end();
    expect(finished[2]!.attributes).toStrictEqual({ keep: 'k' });
  });

  test('at most 128 attributes, the rest counted as dropped', () => {
    const { tracer, finished } = setup();
    const many = Object.fromEntries(Array.from({ length: 130 }, (_, i) => [`k${i}`, i]));
    const span = tracer.startSpan('many', { attributes: many }, ROOT_CONTEXT);
    span.setAttribute('late', 'x');
    span.setAttribute('k0', 'updated'); // an existing key is still writable at the limit
    span.end();
    expect(Object.keys(finished[0]!.attributes)).toHaveLength(128);
    expect(finished[0]!.attributes.k0).toBe('updated');
    expect(finished[0]!.droppedAttributesCount).toBe(3);
    expect(Object.keys(many)).toHaveLength(130);

    const spread = tracer.startSpan('spread', { attributes: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`s${i}`, i])) }, ROOT_CONTEXT);
    spread.setAttributes(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`t${i}`, i])));
    spread.end();
    expect(Object.keys(finished[1]!.attributes)).toHaveLength(128);
    expect(finished[1]!.droppedAttributesCount).toBe(22);
  });
});

describe('end() and status', () => {
  test('nothing changes after end(), and a second end() sends nothing', () => {
    const { tracer, finished } = setup();
    const span = tracer.startSpan('ended', { attributes: { a: 1 } }, ROOT_CONTEXT);
    span.end();
    expect(span.isRecording()).toBe(false);
    span.setAttribute('b', 2).setAttributes({ c: 3 });
    span.updateName('renamed');
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'late' });
    span.addEvent('late');
    span.recordException(new Error('late'));
    span.addLink({ context: trace.getSpanContext(remoteParent(true))! });
    span.end();
    expect(finished).toHaveLength(1);
    const f = finished[0]!;
    expect([f.name, f.statusCode, f.events.length, f.links.length]).toEqual(['ended', SpanStatusCode.UNSET, 0, 0]);
    expect(f.attributes).toStrictEqual({ a: 1 });
  });

  test('ERROR keeps its message; OK is final; UNSET is ignored', () => {
    const { tracer, finished } = setup();
    const failed = tracer.startSpan('failed', {}, ROOT_CONTEXT);
    failed.setStatus({ code: SpanStatusCode.ERROR, message: 'bad input' });
    failed.setStatus({ code: SpanStatusCode.UNSET });
    failed.end();
    expect([finished[0]!.statusCode, finished[0]!.statusMessage]).toEqual([2, 'bad input']);

    const ok = tracer.startSpan('ok', {}, ROOT_CONTEXT);
    ok.setStatus({ code: SpanStatusCode.OK });
    ok.setStatus({ code: SpanStatusCode.ERROR, message: 'too late' });
    ok.setStatus({ code: SpanStatusCode.UNSET });
    ok.end();
    expect([finished[1]!.statusCode, finished[1]!.statusMessage]).toEqual([SpanStatusCode.OK, undefined]);
  });
});

describe('times and kinds', () => {
  test('start is the wall clock, end follows it', async () => {
    const { tracer, finished } = setup();
    const before = Date.now();
    const span = tracer.startSpan('timed', {}, ROOT_CONTEXT);
    const after = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    span.end();
    const f = finished[0]!;
    expect(f.startTime).toBeGreaterThanOrEqual(before - 5);
    expect(f.startTime).toBeLessThanOrEqual(after + 5);
    expect(f.endTime).toBeGreaterThanOrEqual(f.startTime);
    expect(f.kind).toBe(SpanKind.INTERNAL);
  });

  test('explicit times as Date or epoch milliseconds; SERVER and CLIENT kinds kept', () => {
    const { tracer, finished } = setup();
    const start = Date.now() - 10_000;
    tracer.startSpan('dates', { startTime: new Date(start), kind: SpanKind.SERVER }, ROOT_CONTEXT).end(new Date(start + 1234));
    tracer.startSpan('numbers', { startTime: start, kind: SpanKind.CLIENT }, ROOT_CONTEXT).end(start + 250);
    expect(finished.map((f) => [f.name, f.kind, f.startTime, f.endTime])).toEqual([
      ['dates', SpanKind.SERVER, start, start + 1234],
      ['numbers', SpanKind.CLIENT, start, start + 250],
    ]);
  });
});

describe('events, exceptions, links, startActiveSpan', () => {
  test('addEvent, recordException and addLink', () => {
    const { tracer, finished } = setup();
    const linked = trace.getSpanContext(remoteParent(true, 'l=1'))!;
    const span = tracer.startSpan('eventful', {}, ROOT_CONTEXT);
    span.addEvent('cache.miss', { 'cache.key': 'user:1', nothing: undefined, empty: null as unknown as string });
    span.recordException(new Error('boom'));
    span.addLink({ context: linked, attributes: { why: 'retry' } });
    span.end();
    const f = finished[0]!;
    expect(f.events.map((e) => e.name)).toEqual(['cache.miss', 'exception']);
    expect(f.events[0]!.attributes).toStrictEqual({ 'cache.key': 'user:1' });
    expect(f.events[1]!.attributes['exception.type']).toBe('Error');
    expect(f.events[1]!.attributes['exception.message']).toBe('boom');
    expect(String(f.events[1]!.attributes['exception.stacktrace'])).toContain('boom');
    for (const e of f.events) expect(e.time).toBeGreaterThanOrEqual(f.startTime);
    expect(f.links).toHaveLength(1);
    expect(f.links[0]!.context).toEqual(linked);
    expect(f.links[0]!.attributes).toEqual({ why: 'retry' });

    tracer.startSpan('linked-at-start', { links: [{ context: linked }] }, ROOT_CONTEXT).end();
    expect(finished[1]!.links.map((l) => l.context)).toEqual([linked]);
  });

  test('startActiveSpan calls fn with a recording span and returns its value', () => {
    const { tracer, finished } = setup();
    let seen: Span | undefined;
    const result = tracer.startActiveSpan('active', (span: Span) => {
      seen = span;
      expect(span.isRecording()).toBe(true);
      span.end();
      return 42;
    });
    expect(result).toBe(42);
    expect(finished).toHaveLength(1);
    expect(finished[0]!.spanId).toBe(seen!.spanContext().spanId);

    const parent = remoteParent(true);
    const child = tracer.startActiveSpan('with-parent', { kind: SpanKind.SERVER }, parent, (span: Span) => {
      span.end();
      return span.spanContext().traceId;
    });
    expect(child).toBe(trace.getSpanContext(parent)!.traceId);
    expect(finished[1]!.parentIsRemote).toBe(true);
  });
});
