// A tracer provider for @opentelemetry/api that records a span in one small object and hands it,
// once ended, to a sink that encodes it at once (otlp-trace-encoding.ts): nothing of a finished
// span outlives the request that made it.
//
// Why not the SDK's tracer (@opentelemetry/sdk-trace)? Measured under `npm run bench --tracing`,
// its span (clock pairs and hrtime tuples per timestamp, attributes cleaned and copied twice, span
// metrics) and its batch processor (every finished span held until the batch is serialized, so
// each one survives into the old generation) cost GET /user 20-25% of its throughput; the issue's
// budget is 15%. What the SDK is still used for, on Node: its samplers (OTEL_TRACES_SAMPLER) and
// its OTLP/HTTP transport (retries, timeouts, headers, compression); see telemetry-node.ts.
//
// Semantics follow the SDK's: ids from a random source, a parent from the context (remote or
// local), the sampler's decision (NOT_RECORD: a non-recording span that still propagates;
// RECORD: recorded, not exported; RECORD_AND_SAMPLED: exported), at most 128 attributes, events
// and links per span (OTEL_SPAN_*_COUNT_LIMIT's default) with the dropped ones counted, no change
// after end(). Start time is the wall clock; the duration is measured on the monotonic clock.
import {
  type Attributes, type AttributeValue, type Context, type Exception, type HrTime, type Link, type Span, type SpanContext, SpanKind,
  type SpanOptions, type SpanStatus, SpanStatusCode, type TimeInput, TraceFlags, type TraceState, type Tracer, type TracerProvider,
  context, diag, isSpanContextValid, trace,
} from '@opentelemetry/api';
import { NOT_RECORD, RECORD_AND_SAMPLED, type Sampler, parentBasedAlwaysOn, randomHex } from './sampling.ts';

export { NOT_RECORD, RECORD, RECORD_AND_SAMPLED, type Sampler, type SamplingResult, parentBasedAlwaysOn } from './sampling.ts';

export interface Scope {
  name: string;
  version?: string;
}

export interface SpanEvent {
  name: string;
  /** Unix epoch, milliseconds (fractional). */
  time: number;
  attributes: Attributes;
  droppedAttributesCount: number;
}

export interface SpanLink {
  context: SpanContext;
  attributes: Attributes;
}

/** What a sink gets of an ended span (the span itself, read-only by contract). */
export interface FinishedSpan {
  readonly scope: Scope;
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly traceState: TraceState | undefined;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  /** Whether the parent came from another process (traceparent); undefined for a root span. */
  readonly parentIsRemote: boolean | undefined;
  readonly name: string;
  readonly kind: SpanKind;
  /** Unix epoch, milliseconds (fractional). */
  readonly startTime: number;
  readonly endTime: number;
  readonly attributes: Attributes;
  readonly droppedAttributesCount: number;
  readonly events: readonly SpanEvent[];
  readonly droppedEventsCount: number;
  readonly links: readonly SpanLink[];
  readonly droppedLinksCount: number;
  readonly statusCode: SpanStatusCode;
  readonly statusMessage: string | undefined;
}

export interface SpanSink {
  /** Called once per sampled span, synchronously from end(). Must not throw. */
  onEnd(span: FinishedSpan): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

const LIMIT = 128;
const NONE: Attributes = Object.freeze({}) as Attributes;
const NO_EVENTS: readonly SpanEvent[] = Object.freeze([]) as readonly SpanEvent[];
const NO_LINKS: readonly SpanLink[] = Object.freeze([]) as readonly SpanLink[];

function isValue(v: unknown): v is AttributeValue {
  return v !== null && v !== undefined;
}

/** A TimeInput as Unix epoch milliseconds (numbers below performance.now() are performance timestamps, as in the SDK). */
function epochMillis(t: TimeInput): number {
  if (typeof t === 'number') return t < performance.now() ? performance.timeOrigin + t : t;
  if (t instanceof Date) return t.getTime();
  const hr = t as HrTime;
  return hr[0] * 1000 + hr[1] / 1e6;
}

class RecordingSpan implements Span, FinishedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly traceState: TraceState | undefined;
  readonly parentSpanId: string;
  readonly parentIsRemote: boolean | undefined;
  name: string;
  readonly kind: SpanKind;
  readonly startTime: number;
  endTime = 0;
  attributes: Attributes;
  droppedAttributesCount = 0;
  events: SpanEvent[] | readonly SpanEvent[] = NO_EVENTS;
  droppedEventsCount = 0;
  links: SpanLink[] | readonly SpanLink[] = NO_LINKS;
  droppedLinksCount = 0;
  statusCode: SpanStatusCode = SpanStatusCode.UNSET;
  statusMessage: string | undefined = undefined;
  private ended = false;
  /** Whether `attributes` is this span's own object (else it is the caller's, shared, not to be written). */
  private ownAttributes = false;
  private attributeCount: number;
  private context: SpanContext | undefined;
  private readonly startPerf: number;
  /** Given by the caller: "now" is then the wall clock, as in the SDK. */
  private readonly startGiven: boolean;

  constructor(
    readonly scope: Scope, private readonly sink: SpanSink | undefined, traceId: string, traceFlags: number, traceState: TraceState | undefined,
    parent: ParentRef | undefined, name: string, kind: SpanKind, attributes: Attributes, startTime: TimeInput | undefined, links: Link[] | undefined,
  ) {
    this.traceId = traceId;
    this.spanId = randomHex(8);
    this.traceFlags = traceFlags;
    this.traceState = traceState;
    this.parentSpanId = parent ? parent.spanId : '';
    this.parentIsRemote = parent ? parent.isRemote === true : undefined;
    this.name = name;
    this.kind = kind;
    this.startPerf = performance.now();
    this.startGiven = startTime !== undefined;
    this.startTime = startTime === undefined ? Date.now() : epochMillis(startTime);
    this.attributes = attributes;
    let n = 0;
    for (const key in attributes) if (Object.hasOwn(attributes, key)) n++;
    this.attributeCount = n;
    if (n > LIMIT || !allValues(attributes)) this.copyAttributes();
    if (links?.length) this.addLinks(links);
  }

  spanContext(): SpanContext {
    this.context ??= { traceId: this.traceId, spanId: this.spanId, traceFlags: this.traceFlags, ...(this.traceState ? { traceState: this.traceState } : {}) };
    return this.context;
  }

  /** Makes `attributes` this span's own: valid values only, at most LIMIT of them. */
  private copyAttributes(): void {
    const own: Attributes = {};
    let n = 0;
    for (const key in this.attributes) {
      if (!Object.hasOwn(this.attributes, key)) continue;
      const value = this.attributes[key];
      if (!isValue(value) || key.length === 0) continue;
      if (n >= LIMIT) {
        this.droppedAttributesCount++;
        continue;
      }
      own[key] = value;
      n++;
    }
    this.attributes = own;
    this.attributeCount = n;
    this.ownAttributes = true;
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (this.ended || !isValue(value) || typeof key !== 'string' || key.length === 0) return this;
    if (!this.ownAttributes) this.copyAttributes();
    if (!Object.hasOwn(this.attributes, key)) {
      if (this.attributeCount >= LIMIT) {
        this.droppedAttributesCount++;
        return this;
      }
      this.attributeCount++;
    }
    this.attributes[key] = value;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key]!);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    let attributes: Attributes | undefined;
    if (attributesOrTime instanceof Date || typeof attributesOrTime === 'number' || Array.isArray(attributesOrTime)) time ??= attributesOrTime as TimeInput;
    else attributes = attributesOrTime;
    const kept: Attributes = {};
    let n = 0;
    let dropped = 0;
    for (const key in attributes) {
      if (!Object.hasOwn(attributes, key) || !isValue(attributes[key])) continue;
      if (n >= LIMIT) dropped++;
      else {
        kept[key] = attributes[key];
        n++;
      }
    }
    if (this.events === NO_EVENTS) this.events = [];
    const events = this.events as SpanEvent[];
    if (events.length >= LIMIT) {
      events.shift();
      this.droppedEventsCount++;
    }
    events.push({ name, time: time === undefined ? this.now() : epochMillis(time), attributes: kept, droppedAttributesCount: dropped });
    return this;
  }

  addLink(link: Link): this {
    if (this.ended) return this;
    if (this.links === NO_LINKS) this.links = [];
    const links = this.links as SpanLink[];
    if (links.length >= LIMIT) {
      this.droppedLinksCount++;
      return this;
    }
    links.push({ context: link.context, attributes: link.attributes ? { ...link.attributes } : NONE });
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.ended || status.code === SpanStatusCode.UNSET || this.statusCode === SpanStatusCode.OK) return this;
    this.statusCode = status.code;
    this.statusMessage = status.code === SpanStatusCode.ERROR && typeof status.message === 'string' ? status.message : undefined;
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  /** Now, on the span's clock: its wall-clock start plus the monotonic time since (the wall clock if the start was given). */
  private now(): number {
    return this.startGiven ? Date.now() : this.startTime + (performance.now() - this.startPerf);
  }

  end(endTime?: TimeInput): void {
    if (this.ended) {
      diag.error(`${this.name} ${this.traceId}-${this.spanId}: end() called twice`);
      return;
    }
    this.ended = true;
    const end = endTime === undefined ? this.now() : epochMillis(endTime);
    this.endTime = Math.max(end, this.startTime);
    if (this.sink && this.traceFlags & TraceFlags.SAMPLED) this.sink.onEnd(this);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') attributes['exception.message'] = exception;
    else if (exception) {
      const type = exception.code !== undefined ? String(exception.code) : exception.name;
      if (type) attributes['exception.type'] = type;
      if (exception.message) attributes['exception.message'] = exception.message;
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack;
    }
    if (attributes['exception.type'] || attributes['exception.message']) this.addEvent('exception', attributes, time);
  }
}

/** What a span keeps of its parent: a SpanContext, or the parent span itself when it is ours. */
interface ParentRef {
  readonly spanId: string;
  readonly isRemote?: boolean;
}

function allValues(attributes: Attributes): boolean {
  for (const key in attributes) if (Object.hasOwn(attributes, key) && (!isValue(attributes[key]) || key.length === 0)) return false;
  return true;
}

/** A span that records nothing but carries its trace on (the sampler said NOT_RECORD). */
function nonRecording(traceId: string, traceState: TraceState | undefined): Span {
  return trace.wrapSpanContext({ traceId, spanId: randomHex(8), traceFlags: TraceFlags.NONE, ...(traceState ? { traceState } : {}) });
}

class RecorderTracer implements Tracer {
  constructor(private readonly scope: Scope, private readonly provider: SpanRecorder) {}

  startSpan(name: string, options: SpanOptions = {}, parentContext: Context = context.active()): Span {
    const ctx = options.root ? trace.deleteSpan(parentContext) : parentContext;
    const kind = options.kind ?? SpanKind.INTERNAL;
    const attributes = options.attributes ?? NONE;
    const provider = this.provider;
    // A child of one of our spans under a parent-based sampler: the parent's decision, as the
    // SDK's ParentBasedSampler (local parent: sampled -> on, not sampled -> off) would give it.
    const local = trace.getSpan(ctx);
    if (local instanceof RecordingSpan && provider.parentBased && !options.links?.length) {
      if (!(local.traceFlags & TraceFlags.SAMPLED)) return nonRecording(local.traceId, local.traceState);
      return new RecordingSpan(this.scope, provider.sink, local.traceId, TraceFlags.SAMPLED, local.traceState, local, name, kind, attributes, options.startTime, undefined);
    }
    const parentSpan = local?.spanContext();
    const parent = parentSpan && isSpanContextValid(parentSpan) ? parentSpan : undefined;
    const traceId = parent ? parent.traceId : randomHex(16);
    const sampling = provider.sampler.shouldSample(ctx, traceId, name, kind, attributes, options.links ?? []);
    const traceState = sampling.traceState ?? parent?.traceState;
    if (sampling.decision === NOT_RECORD) return nonRecording(traceId, traceState);
    const flags = sampling.decision === RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE;
    const attrs = sampling.attributes ? { ...attributes, ...sampling.attributes } : attributes;
    return new RecordingSpan(this.scope, provider.sink, traceId, flags, traceState, parent, name, kind, attrs, options.startTime, options.links);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...args: unknown[]): ReturnType<F> {
    const fn = args.at(-1) as (span: Span) => ReturnType<F>;
    const options = (args.length >= 2 ? args[0] : undefined) as SpanOptions | undefined;
    const parent = (args.length >= 3 ? args[1] : undefined) as Context | undefined ?? context.active();
    const span = this.startSpan(name, options, parent);
    return context.with(trace.setSpan(parent, span), fn, undefined, span) as ReturnType<F>;
  }
}


export interface SpanRecorderOptions {
  /** Default: parentBasedAlwaysOn. */
  sampler?: Sampler;
  /**
   * Whether `sampler` follows a local parent's decision (the SDK's ParentBasedSampler with its
   * default delegates): children of our own spans then skip it. True for the default sampler.
   */
  parentBased?: boolean;
  /** Where sampled spans go when they end; none: spans are recorded and dropped (tests, RECORD-only). */
  sink?: SpanSink;
}

/** The tracer provider: register it with trace.setGlobalTracerProvider. */
export class SpanRecorder implements TracerProvider {
  readonly sampler: Sampler;
  readonly parentBased: boolean;
  readonly sink: SpanSink | undefined;
  private readonly tracers = new Map<string, RecorderTracer>();

  constructor(opts: SpanRecorderOptions = {}) {
    this.sampler = opts.sampler ?? parentBasedAlwaysOn;
    this.parentBased = opts.sampler ? opts.parentBased === true : true;
    this.sink = opts.sink;
  }

  getTracer(name: string, version?: string): Tracer {
    const key = `${name}@${version ?? ''}`;
    let tracer = this.tracers.get(key);
    if (!tracer) {
      tracer = new RecorderTracer(version ? { name, version } : { name }, this);
      this.tracers.set(key, tracer);
    }
    return tracer;
  }

  forceFlush(): Promise<void> {
    return this.sink?.forceFlush() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return this.sink?.shutdown() ?? Promise.resolve();
  }
}
