// Module types the Workers adapter needs without pulling @cloudflare/workers-types into the
// Node type check (its globals clash with DOM's).

// migrations/*.sql are bundled as text modules (wrangler.toml `[[rules]] type = "Text"`).
declare module '*.sql' {
  const text: string;
  export default text;
}

// The part of workerd's TCP socket API used by src/adapters/workers-tcp-socket.ts.
declare module 'cloudflare:sockets' {
  interface SocketAddress {
    hostname: string;
    port: number;
  }
  interface SocketOptions {
    secureTransport?: 'off' | 'on' | 'starttls';
    allowHalfOpen?: boolean;
  }
  interface Socket {
    readonly readable: ReadableStream<Uint8Array>;
    readonly writable: WritableStream<Uint8Array>;
    readonly opened: Promise<unknown>;
    readonly closed: Promise<void>;
    close(): Promise<void>;
  }
  export function connect(address: SocketAddress | string, options?: SocketOptions): Socket;
}
