// What the two OTLP span encodings share: the batch and encoder types, span flags, timestamps.
import type { FinishedSpan } from './span-recorder.ts';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface EncodedBatch {
  /** The request body: an ExportTraceServiceRequest. */
  body: Uint8Array;
  /** How many spans it holds (the SDK's exporter metrics read `length`). */
  length: number;
}

/** A batch; in a diagnostic log line (DEBUG=true) its size, not its bytes. */
export function batch(body: Uint8Array, length: number): EncodedBatch {
  return { body, length, toJSON: () => ({ spans: length, bytes: body.length }) } as EncodedBatch;
}

export interface SpanEncoder {
  readonly contentType: string;
  /** Spans encoded and not yet taken. */
  readonly pending: number;
  /** Bytes encoded and not yet taken. */
  readonly pendingBytes: number;
  add(span: FinishedSpan): void;
  /** Everything pending as one request; undefined when nothing is. */
  take(): EncodedBatch | undefined;
}

// The OTLP span flags: the W3C trace flags plus "whether the parent is remote is known" (0x100)
// and "the parent is remote" (0x200), as the SDK sets them.
export function spanFlags(traceFlags: number, parentIsRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | 0x100 | (parentIsRemote ? 0x200 : 0);
}

/** Epoch milliseconds as nanoseconds (what OTLP's fixed64 timestamps hold). */
export function nanos(ms: number): bigint {
  const whole = Math.floor(ms);
  return BigInt(whole) * 1_000_000n + BigInt(Math.trunc((ms - whole) * 1e6));
}

