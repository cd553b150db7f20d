// Sampled spans from span-recorder.ts, encoded as they end (otlp-trace-encoding.ts) and sent in
// batches: a full batch (OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans) at once, the rest every
// OTEL_BSP_SCHEDULE_DELAY ms. At most OTEL_BSP_MAX_QUEUE_SIZE spans wait; beyond that new spans
// are dropped and counted, as the SDK's BatchSpanProcessor does. Sending is the adapter's
// (telemetry-node.ts: the SDK's OTLP/HTTP transport).
import { diag } from '@opentelemetry/api';
import type { EncodedBatch, SpanEncoder } from './otlp-trace-encoding.ts';
import type { FinishedSpan, SpanSink } from './span-recorder.ts';

export interface BatchOptions {
  scheduledDelayMillis: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
  /** Told, once per export round, how many spans were dropped since the last (the queue was full). */
  onDropped?: (count: number) => void;
}

/** Sends one batch; resolves when it is done, whatever the outcome (failures are the sender's to log). */
export type SendBatch = (batch: EncodedBatch) => Promise<void>;

export class BatchingSpanSink implements SpanSink {
  private readonly ready: EncodedBatch[] = [];
  private readySpans = 0;
  private readonly sending = new Set<Promise<void>>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private exportScheduled = false;
  private closed = false;
  /** Spans dropped because the queue was full, since the last warning. */
  private dropped = 0;

  constructor(private readonly encoder: SpanEncoder, private readonly send: SendBatch, private readonly opts: BatchOptions) {}

  onEnd(span: FinishedSpan): void {
    if (this.closed) return;
    if (this.encoder.pending + this.readySpans >= this.opts.maxQueueSize) {
      this.dropped++;
      return;
    }
    try {
      this.encoder.add(span);
    } catch (err) {
      diag.error('a span could not be encoded', err instanceof Error ? err.message : String(err));
      return;
    }
    if (this.encoder.pending >= this.opts.maxExportBatchSize) {
      this.seal();
      this.scheduleExport();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.seal();
        this.exportReady();
      }, this.opts.scheduledDelayMillis);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /** Moves what the encoder holds into the ready list as one batch. */
  private seal(): void {
    const batch = this.encoder.take();
    if (!batch) return;
    this.ready.push(batch);
    this.readySpans += batch.length;
  }

  /** Exports on a later turn: never inside the end() of a request's span. */
  private scheduleExport(): void {
    if (this.exportScheduled) return;
    this.exportScheduled = true;
    setTimeout(() => {
      this.exportScheduled = false;
      this.exportReady();
    }, 0);
  }

  private exportReady(): void {
    if (this.dropped > 0) {
      this.opts.onDropped?.(this.dropped);
      this.dropped = 0;
    }
    for (let batch = this.ready.shift(); batch; batch = this.ready.shift()) {
      this.readySpans -= batch.length;
      const done: Promise<void> = this.send(batch).catch((err: unknown) => {
        diag.error('span export failed', err instanceof Error ? err.message : String(err));
      }).finally(() => this.sending.delete(done));
      this.sending.add(done);
    }
  }

  async forceFlush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.seal();
    this.exportReady();
    await Promise.all([...this.sending]);
  }

  /** Sends what is pending; spans that end from now on are refused, as the SDK's processor does. */
  async shutdown(): Promise<void> {
    this.closed = true;
    await this.forceFlush();
  }
}
