// Sampling decisions and ids for span-recorder.ts: the SDK's Sampler interface and decision
// values (its samplers fit as they are), the default sampler, and random trace and span ids.
import { type Attributes, type Context, type Link, type SpanKind, TraceFlags, type TraceState, isSpanContextValid, trace } from '@opentelemetry/api';

/** The SDK's SamplingDecision values. */
export const NOT_RECORD = 0;
export const RECORD = 1;
export const RECORD_AND_SAMPLED = 2;

export interface SamplingResult {
  decision: number;
  attributes?: Readonly<Attributes>;
  traceState?: TraceState;
}

/** The SDK's Sampler interface (its samplers fit it as they are). */
export interface Sampler {
  shouldSample(context: Context, traceId: string, spanName: string, spanKind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult;
}

/** The default, as the SDK's: a parent's decision if there is one, else every trace sampled. */
export const parentBasedAlwaysOn: Sampler = {
  shouldSample(context) {
    const parent = trace.getSpanContext(context);
    if (!parent || !isSpanContextValid(parent)) return { decision: RECORD_AND_SAMPLED };
    return { decision: parent.traceFlags & TraceFlags.SAMPLED ? RECORD_AND_SAMPLED : NOT_RECORD };
  },
};

// Random ids: 4 KiB of random bytes at a time, written out once as one flat hex string that ids
// are sliced from (cheap to make, and cheap to read back as bytes when encoded).
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const POOL_BYTES = 4096;
let hexPool = '';
let hexPos = 0;

function refill(): void {
  const bytes = crypto.getRandomValues(new Uint8Array(POOL_BYTES));
  const parts = new Array<string>(POOL_BYTES);
  for (let i = 0; i < POOL_BYTES; i++) parts[i] = HEX[bytes[i]!]!;
  hexPool = parts.join('');
  hexPos = 0;
}

const INVALID_IDS = new Set(['0'.repeat(16), '0'.repeat(32)]);

/** `bytes` random bytes as lower-case hex, never all zeros (the invalid id). */
export function randomHex(bytes: number): string {
  for (;;) {
    if (hexPos + 2 * bytes > hexPool.length) refill();
    const id = hexPool.substring(hexPos, hexPos + 2 * bytes);
    hexPos += 2 * bytes;
    if (!INVALID_IDS.has(id)) return id;
  }
}

