// A protobuf wire-format writer over one growing buffer (the OTLP span encoder's).
const utf8 = new TextEncoder();

/** A protobuf writer over one growing buffer. */
export class ProtoWriter {
  buf: Uint8Array;
  view: DataView;
  pos = 0;

  constructor(size = 4096) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }

  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** A non-negative integer up to 2^53. */
  varint(v: number): void {
    this.reserve(10);
    const buf = this.buf;
    while (v > 0x7f) {
      buf[this.pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    buf[this.pos++] = v;
  }

  /** An int64 varint: negatives as ten bytes of two's complement. */
  int64(v: number): void {
    if (v >= 0 && v <= Number.MAX_SAFE_INTEGER) {
      this.varint(v);
      return;
    }
    let u = BigInt.asUintN(64, BigInt(v));
    this.reserve(10);
    while (u > 0x7fn) {
      this.buf[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  fixed32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.pos, v >>> 0, true);
    this.pos += 4;
  }

  fixed64(v: bigint): void {
    this.reserve(8);
    this.view.setBigUint64(this.pos, v, true);
    this.pos += 8;
  }

  double(v: number): void {
    this.reserve(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /** A length-prefixed UTF-8 string (ASCII in one pass; anything else through TextEncoder). */
  string(s: string): void {
    const n = s.length;
    if (n < 0x80) {
      this.reserve(n + 1);
      const buf = this.buf;
      const start = this.pos;
      buf[start] = n;
      let p = start + 1;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) {
          this.bytes(utf8.encode(s));
          return;
        }
        buf[p++] = c;
      }
      this.pos = p;
      return;
    }
    const bytes = utf8.encode(s);
    this.bytes(bytes);
  }

  /** Bytes as they are (an encoded piece: tag, length and body). */
  raw(b: Uint8Array): void {
    const n = b.length;
    this.reserve(n);
    const buf = this.buf;
    const p = this.pos;
    if (n > 64) buf.set(b, p);
    else for (let i = 0; i < n; i++) buf[p + i] = b[i]!;
    this.pos = p + n;
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** A hex id as length-prefixed bytes. */
  hex(h: string): void {
    const n = h.length >> 1;
    this.varint(n);
    this.reserve(n);
    for (let i = 0; i < n; i++) this.buf[this.pos++] = (nibble(h.charCodeAt(2 * i)) << 4) | nibble(h.charCodeAt(2 * i + 1));
  }

  /** Starts a length-delimited field's body; `end(start)` writes its length in front of it. */
  begin(): number {
    this.reserve(1);
    this.pos++;
    return this.pos;
  }

  end(start: number): void {
    const len = this.pos - start;
    if (len < 0x80) {
      this.buf[start - 1] = len;
      return;
    }
    const size = varintSize(len);
    this.reserve(size - 1);
    this.buf.copyWithin(start + size - 1, start, this.pos);
    this.pos += size - 1;
    let p = start - 1;
    let v = len;
    while (v > 0x7f) {
      this.buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[p] = v;
  }

  /** Drops what was written, keeping the buffer (up to a size). */
  reset(): void {
    this.pos = 0;
    if (this.buf.length > 1 << 20) {
      this.buf = new Uint8Array(4096);
      this.view = new DataView(this.buf.buffer);
    }
  }
}

function nibble(c: number): number {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
}

export function varintSize(v: number): number {
  let n = 1;
  while (v > 0x7f) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}
