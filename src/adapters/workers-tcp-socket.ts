// Lets @neondatabase/serverless speak to Postgres over a plain TCP socket (cloudflare:sockets)
// instead of a WebSocket: the driver treats its WebSocket as a byte pipe, so a small look-alike
// over `connect()` is enough. Used for Hyperdrive, whose endpoint is TCP (and whose hop from the
// Worker stays inside Cloudflare); not for a Postgres across the internet, which would be
// unencrypted this way.
import { connect } from 'cloudflare:sockets';

/** The WebSocket URL the driver builds: `ws://` + tcpProxyAddress(host, port). */
export const tcpProxyAddress = (host: string, port: number | string): string =>
  `tcp.invalid/?address=${encodeURIComponent(`${host}:${port}`)}`;

type Listener = (event: Event) => void;

class TcpWebSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;

  binaryType = 'arraybuffer';
  readyState = TcpWebSocket.CONNECTING;
  readonly #events = new EventTarget();
  readonly #socket: ReturnType<typeof connect>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;

  constructor(url: string) {
    const address = new URL(url).searchParams.get('address') ?? '';
    const colon = address.lastIndexOf(':');
    const hostname = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
    const port = Number(address.slice(colon + 1));
    if (colon <= 0 || !Number.isInteger(port)) throw new Error(`not a host:port address: "${address}"`);
    this.#socket = connect({ hostname, port }, { allowHalfOpen: false });
    this.#writer = this.#socket.writable.getWriter();
    this.#socket.opened.then(
      () => {
        this.readyState = TcpWebSocket.OPEN;
        this.#events.dispatchEvent(new Event('open'));
        void this.#pump();
      },
      (err: unknown) => this.#fail(err),
    );
  }

  addEventListener(type: string, listener: Listener): void {
    this.#events.addEventListener(type, listener);
  }

  removeEventListener(type: string, listener: Listener): void {
    this.#events.removeEventListener(type, listener);
  }

  send(data: ArrayBuffer | ArrayBufferView): void {
    const bytes =
      data instanceof ArrayBuffer
        ? new Uint8Array(data)
        : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    this.#writer.write(bytes).catch((err: unknown) => this.#fail(err));
  }

  close(): void {
    if (this.readyState >= TcpWebSocket.CLOSING) return;
    this.readyState = TcpWebSocket.CLOSING;
    this.#socket
      .close()
      .catch(() => undefined)
      .finally(() => this.#closed());
  }

  async #pump(): Promise<void> {
    const reader = this.#socket.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        // The driver wraps `data` in a Buffer: hand it an ArrayBuffer of exactly these bytes.
        const data = new Uint8Array(value).buffer;
        this.#events.dispatchEvent(new MessageEvent('message', { data }));
      }
      this.#closed();
    } catch (err) {
      this.#fail(err);
    }
  }

  #fail(err: unknown): void {
    if (this.readyState === TcpWebSocket.CLOSED) return;
    const message = err instanceof Error ? err.message : String(err);
    this.#events.dispatchEvent(Object.assign(new Event('error'), { message, error: err }));
    this.#closed();
  }

  #closed(): void {
    if (this.readyState === TcpWebSocket.CLOSED) return;
    this.readyState = TcpWebSocket.CLOSED;
    this.#events.dispatchEvent(new Event('close'));
  }
}

/** For neonConfig.webSocketConstructor (with wsProxy = tcpProxyAddress, useSecureWebSocket = false). */
export const TcpSocketAsWebSocket = TcpWebSocket as unknown as typeof WebSocket;
