// Creates a new PGlite data directory (initdb) in a worker thread that then exits. initdb's WASM
// instance holds about 570 MB for as long as it lives; in the server's own thread that memory
// stayed until some later major GC (the first start of a new directory sat at 750–860 MB RSS).
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

const db = await PGlite.create(workerData.pgdata, workerData.options);
await db.close();
parentPort?.postMessage('initialized');
