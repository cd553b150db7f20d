// A TCP proxy of the tests' own between authsvc and a server (Postgres, SMTP) on loopback, told
// what to do to the traffic: delay it, black-hole it, drop or reset connections, refuse new ones,
// or reset a connection when a chosen statement goes through it.
import net from 'node:net';

export type Mode = 'pass' | 'blackhole' | 'refuse';

export interface Trap {
  /** Matched against each chunk the client sends (latin1): a statement's text in a Parse message. */
  match: RegExp;
  /** Reset the connection before the chunk reaches the server, or right after it was forwarded. */
  when: 'before' | 'after';
  /** Called when the trap fires. */
  fired?: () => void;
}

export interface FaultProxy {
  port: number;
  /** Local ports of the proxy's connections to the server (pg_stat_activity.client_port). */
  upstreamPorts(): number[];
  /** Open client connections. */
  connections(): number;
  /** Each chunk is held this long before it is forwarded (both ways). */
  delay(ms: number): void;
  /**
   * Nothing moves: new connections are accepted and get no answer, data on open ones is held
   * (as TCP would retransmit it) and delivered after heal().
   */
  blackhole(): void;
  /** Closes every connection (FIN) and refuses new ones (ECONNREFUSED) until heal(). */
  refuse(): Promise<void>;
  /** Resets every open connection now (RST); new connections pass. */
  resetAll(): void;
  /** Resets the connection the first chunk matching `trap.match` travels on (once). */
  trap(trap: Trap): void;
  /** Removes traps that have not fired. */
  untrap(): void;
  /** Back to passing everything: held data flows, the listener accepts again. */
  heal(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  server: net.Socket;
  held: Array<{ to: net.Socket; data: Buffer }>;
  mute?: boolean;
}

export async function startFaultProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<FaultProxy> {
  let mode: Mode = 'pass';
  let delayMs = 0;
  const traps: Trap[] = [];
  const pairs = new Set<Pair>();

  const destroy = (p: Pair, reset: boolean) => {
    for (const s of [p.client, p.server]) {
      if (reset && !s.destroyed && typeof s.resetAndDestroy === 'function') s.resetAndDestroy();
      else s.destroy();
    }
    pairs.delete(p);
  };
  const forward = (p: Pair, to: net.Socket, data: Buffer) => {
    if (p.mute && to === p.client) return;
    if (mode === 'blackhole') {
      p.held.push({ to, data });
      return;
    }
    if (delayMs > 0)
      setTimeout(() => {
        if (!to.destroyed) to.write(data);
      }, delayMs);
    else if (!to.destroyed) to.write(data);
  };

  const onConnection = (client: net.Socket) => {
    const server = net.connect(targetPort, targetHost);
    const p: Pair = { client, server, held: [], mute: false };
    pairs.add(p);
    client.on('data', (data: Buffer) => {
      const text = data.toString('latin1');
      const i = traps.findIndex((t) => t.match.test(text));
      if (i >= 0) {
        const [t] = traps.splice(i, 1);
        t!.fired?.();
        if (t!.when === 'before') {
          destroy(p, true);
          return;
        }
        // The server gets it; its answer never reaches the client, which then sees a reset.
        p.mute = true;
        forward(p, server, data);
        setTimeout(() => destroy(p, true), delayMs + 50);
        return;
      }
      forward(p, server, data);
    });
    server.on('data', (data: Buffer) => forward(p, client, data));
    const end = () => destroy(p, false);
    for (const s of [client, server]) {
      s.on('error', end);
      s.on('close', end);
    }
  };

  let listener = net.createServer(onConnection);
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as net.AddressInfo).port;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      listener = net.createServer(onConnection);
      listener.once('error', reject);
      listener.listen(port, '127.0.0.1', resolve);
    });
  const stopListening = () => new Promise<void>((resolve) => listener.close(() => resolve()));

  return {
    port,
    upstreamPorts: () => [...pairs].map((p) => p.server.localPort).filter((x): x is number => typeof x === 'number'),
    connections: () => pairs.size,
    delay(ms) {
      delayMs = ms;
    },
    blackhole() {
      mode = 'blackhole';
    },
    async refuse() {
      mode = 'refuse';
      const closed = stopListening();
      for (const p of [...pairs]) destroy(p, false);
      await closed;
    },
    resetAll() {
      for (const p of [...pairs]) destroy(p, true);
    },
    trap(t) {
      traps.push(t);
    },
    untrap() {
      traps.length = 0;
    },
    async heal() {
      const was = mode;
      mode = 'pass';
      delayMs = 0;
      if (was === 'refuse') await listen();
      for (const p of pairs) {
        for (const { to, data } of p.held.splice(0)) if (!to.destroyed) to.write(data);
      }
    },
    async close() {
      traps.length = 0;
      for (const p of [...pairs]) destroy(p, false);
      if (mode !== 'refuse') await stopListening();
    },
  };
}
