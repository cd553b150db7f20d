// Ceiling of password sign-in: password verifications per second on all cores, in a process of
// its own, with the same UV_THREADPOOL_SIZE as the servers (set by the parent). Twice as many
// verifications are kept in flight as there are pool threads, so no thread waits for work.
//   bcrypt                — cost 10 through @node-rs/bcrypt, the binding authsvc uses on Node;
//   scrypt-better-auth    — better-auth's own verifyPassword (node:crypto scrypt N=16384, r=16,
//                           p=1, 64-byte key), what the peer's sign-in pays.
// Both run on libuv's thread pool.
//
// usage: node --import tsx bench/ceilings/password.ts <bcrypt|scrypt-better-auth> <seconds> [warm-up seconds]
// prints one JSON line: { perSecond, threads, inFlight, seconds, cpuMsPerOp } (CPU of all threads)
import { hash, verify } from '@node-rs/bcrypt';
import { hashPassword, verifyPassword } from '@better-auth/utils/password';

const algo = process.argv[2];
const seconds = Number(process.argv[3] ?? '5');
const warmup = Number(process.argv[4] ?? '1');
const threads = Number(process.env.UV_THREADPOOL_SIZE ?? '4');
const inFlight = threads * 2;
const password = 'bench-Password-1';

let check: () => Promise<boolean>;
if (algo === 'bcrypt') {
  const encoded = await hash(password, 10);
  check = () => verify(password, encoded);
} else if (algo === 'scrypt-better-auth') {
  const encoded = await hashPassword(password);
  check = () => verifyPassword(encoded, password);
} else {
  throw new Error(`unknown algorithm ${algo}`);
}

let counting = false;
let done = 0;
let running = true;

async function loop(): Promise<void> {
  while (running) {
    if (!(await check())) throw new Error('verification returned false');
    if (counting) done++;
  }
}

const loops = Array.from({ length: inFlight }, loop);
await new Promise((r) => setTimeout(r, warmup * 1000));
counting = true;
const t0 = process.hrtime.bigint();
const cpu0 = process.cpuUsage();
await new Promise((r) => setTimeout(r, seconds * 1000));
const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
const count = done;
const cpu = process.cpuUsage(cpu0);
running = false;
await Promise.all(loops);
process.stdout.write(
  JSON.stringify({
    perSecond: count / elapsed,
    threads,
    inFlight,
    seconds: elapsed,
    cpuMsPerOp: (cpu.user + cpu.system) / 1000 / count,
  }) + '\n',
);
