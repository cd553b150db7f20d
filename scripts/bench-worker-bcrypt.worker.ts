// A tiny Worker for scripts/bench-worker-bcrypt.ts: `/?n=N&op=hash|verify` runs N bcrypt cost-10
// operations with the hasher the Worker uses (bcryptjs through createPortableHasher).
import { createPortableHasher } from '../src/crypto/password.ts';

const hasher = createPortableHasher();
const PASSWORD = 'correct horse battery staple';
let stored: string | undefined;

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get('n') ?? '1');
    const op = url.searchParams.get('op') ?? 'hash';
    stored ??= await hasher.hash(PASSWORD);
    const started = Date.now();
    for (let i = 0; i < n; i++) {
      if (op === 'verify') {
        if (!(await hasher.verify(PASSWORD, stored))) throw new Error('verify failed');
      } else {
        await hasher.hash(PASSWORD);
      }
    }
    // workerd's clock only moves at I/O; bcryptjs yields through timers, so this is close to real.
    return Response.json({ n, op, clockMs: Date.now() - started });
  },
};
