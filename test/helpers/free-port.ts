// A port that was free a moment ago, for the test servers and the benchmark's processes alike.
// Deliberately nothing else here: no exit hooks, no process bookkeeping.
import { createServer } from 'node:net';

/** Listens on port 0 of 127.0.0.1, reads the port the system chose, and closes again. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port ? done(port) : fail(new Error('no free port'))));
    });
  });
}
