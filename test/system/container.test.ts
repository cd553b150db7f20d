// The container image (Dockerfile), built here with podman from local bases
// (scripts/container-bases.sh: Debian from its packages, Node from the npm registry; no container
// registry is reachable) and run as an operator would: read-only root, non-root user, GoTrue's
// environment variables, against the Postgres server and on the embedded database's volume, its
// health check and probes, SIGTERM, SIGKILL and a restart. Postgres server only (the run with
// TEST_DATABASE_URL); there podman is required: without it this fails and says what to install.
import { execFile, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dropSchema } from './faults/setup.ts';
import { TEST_DATABASE_URL, uniqueNamespace } from '../helpers/db.ts';
import { freePort } from '../helpers/free-port.ts';
import { REPO_ROOT, tempDir } from '../helpers/server.ts';

const run = promisify(execFile);
const PODMAN = ['--runtime', 'runc'];
const IMAGE = `localhost/authsvc:test-${process.pid}`;
const NODE_TAG = `localhost/authsvc-base-node:${process.versions.node}`;
const RUNTIME_TAG = 'localhost/authsvc-base:bookworm';
const JWT_SECRET = 'container-jwt-secret-container-jwt-secret-0123';
const PASSWORD = 'container-Password-1';
const UID = 10001;
const containers: string[] = [];
const namespaces: string[] = [];

async function podman(args: string[], timeoutMs = 60_000): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('podman', [...PODMAN, ...args], { timeout: timeoutMs, maxBuffer: 64 << 20 });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number | string };
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : -1 };
  }
}

async function ok(args: string[], timeoutMs?: number): Promise<string> {
  const r = await podman(args, timeoutMs);
  if (r.code !== 0) throw new Error(`podman ${args.join(' ')} → ${r.code}\n${r.stderr}`);
  return r.stdout.trim();
}

/** Starts a detached container and returns its id. */
async function start(args: string[]): Promise<string> {
  const id = await ok(['run', '-d', '--network=host', '--read-only', '--tmpfs', '/tmp', ...args, IMAGE]);
  containers.push(id);
  return id;
}

/** GoTrue's variables for a Postgres-server start on `port`. */
function gotrueEnv(port: number, namespace: string): string[] {
  const env: Record<string, string> = {
    GOTRUE_API_PORT: String(port),
    GOTRUE_DB_DRIVER: 'postgres',
    DATABASE_URL: TEST_DATABASE_URL!,
    GOTRUE_DB_NAMESPACE: namespace,
    GOTRUE_JWT_SECRET: JWT_SECRET,
    API_EXTERNAL_URL: `http://127.0.0.1:${port}`,
    GOTRUE_SITE_URL: 'http://localhost:3000',
    GOTRUE_MAILER_AUTOCONFIRM: 'true',
    GOTRUE_SMTP_HOST: '127.0.0.1',
    GOTRUE_SMTP_PORT: '2525',
    GOTRUE_SMTP_ADMIN_EMAIL: 'admin@example.com',
  };
  return Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
}

async function waitReady(port: number, id: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const res = await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => undefined);
    if (res?.status === 200) return;
    const state = await ok(['inspect', id, '--format', '{{.State.Status}}']);
    if (state === 'exited') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`container not ready on ${port}:\n${(await podman(['logs', id])).stdout}`);
}

async function call(port: number, method: string, path: string, body?: unknown, token?: string) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json().catch(() => ({}))) as Record<string, any> };
}

describe.runIf(TEST_DATABASE_URL)('the container image', () => {
  beforeAll(async () => {
    if (spawnSync('podman', ['--version']).status !== 0) {
      throw new Error(
        'podman is not installed: the container tests need podman, runc and mmdebstrap ' +
          '(apt-get install podman runc mmdebstrap; .ci/run installs them).',
      );
    }
    const bases = spawnSync(
      'bash',
      [join(REPO_ROOT, 'scripts/container-bases.sh'), process.versions.node, process.execPath],
      {
        encoding: 'utf8',
        timeout: 600_000,
      },
    );
    if (bases.status !== 0) throw new Error(`scripts/container-bases.sh failed:\n${bases.stdout}\n${bases.stderr}`);
    await ok(
      [
        'build',
        '--format',
        'docker',
        '--pull=never',
        '--network=host',
        '--build-arg',
        `NODE_IMAGE=${NODE_TAG}`,
        '--build-arg',
        `RUNTIME_IMAGE=${RUNTIME_TAG}`,
        '-t',
        IMAGE,
        REPO_ROOT,
      ],
      900_000,
    );
  }, 1_200_000);

  afterAll(async () => {
    for (const id of containers) await podman(['rm', '-f', '-t', '0', id]);
    await podman(['rmi', '-f', IMAGE]);
    await podman(['image', 'prune', '-f']);
    for (const ns of namespaces) await dropSchema(ns);
  }, 120_000);

  test('at most 250 MB, non-root, GoTrue port exposed, a health check, the malloc tunable set, node in exec form', async () => {
    const [info] = JSON.parse(await ok(['image', 'inspect', IMAGE])) as Record<string, any>[];
    const config = info!.Config as Record<string, any>;
    console.log(`image size: ${(info!.Size / 1e6).toFixed(1)} MB`);
    expect(info!.Size).toBeLessThanOrEqual(250e6);
    expect(config.User).toBe(`${UID}:${UID}`);
    expect(Object.keys(config.ExposedPorts)).toEqual(['9999/tcp']);
    // podman keeps the health check beside Config, docker inside it.
    expect((config.Healthcheck ?? info!.Healthcheck).Test).toEqual(['CMD', 'node', '/app/scripts/healthcheck.mjs']);
    expect(config.Env).toContain('GLIBC_TUNABLES=glibc.malloc.trim_threshold=1048576');
    expect(config.Env).toContain('PORT=9999');
    expect(config.Cmd[0]).toBe('node');
    expect(config.Cmd.at(-1)).toBe('/app/bin/authsvc.js');
    expect(Object.keys(config.Volumes)).toEqual(['/data']);
  });

  test('on the Postgres server with GoTrue variables: read-only root, sign up, sign in, /user, probes, health check, SIGTERM → exit 0', async () => {
    const port = await freePort();
    const namespace = uniqueNamespace();
    namespaces.push(namespace);
    const id = await start(gotrueEnv(port, namespace));
    await waitReady(port, id);

    const email = `container-${process.pid}@example.com`;
    const signup = await call(port, 'POST', '/signup', { email, password: PASSWORD });
    expect(signup.status, JSON.stringify(signup.json)).toBe(200);
    const signin = await call(port, 'POST', '/token?grant_type=password', { email, password: PASSWORD });
    expect(signin.status).toBe(200);
    const user = await call(port, 'GET', '/user', undefined, signin.json.access_token);
    expect(user).toMatchObject({ status: 200, json: { email } });
    expect(await call(port, 'GET', '/health/live')).toEqual({ status: 200, json: { status: 'live' } });
    expect(await call(port, 'GET', '/auth/v1/health/ready')).toEqual({ status: 200, json: { status: 'ready' } });
    expect((await call(port, 'GET', '/health')).json).toMatchObject({ name: 'GoTrue' });

    expect((await podman(['healthcheck', 'run', id])).code).toBe(0);
    expect(await ok(['exec', id, 'node', '-e', 'process.stdout.write(String(process.getuid()))'])).toBe(String(UID));
    const write = await podman(['exec', id, 'node', '-e', "require('fs').writeFileSync('/app/x', '')"]);
    expect(write.code).not.toBe(0);
    expect(write.stderr).toContain('EROFS');
    // GLIBC_TUNABLES is set, so the launcher ran the server without replacing itself.
    const environ = await ok([
      'exec',
      id,
      'node',
      '-e',
      "process.stdout.write(require('fs').readFileSync('/proc/1/environ', 'latin1'))",
    ]);
    expect(environ).not.toContain('AUTHSVC_LAUNCHER_MALLOC_TUNED');

    await ok(['stop', '-t', '30', id], 60_000);
    const state = JSON.parse(await ok(['inspect', id, '--format', '{{json .State}}'])) as Record<string, any>;
    expect(state.ExitCode).toBe(0);
    const output = await podman(['logs', id]);
    const logs = output.stdout;
    // The image ships dist/node without the sources: the launcher has nothing to call it stale against.
    expect(output.stderr).not.toContain('older than the sources');
    expect(logs).toContain('received SIGTERM');
    expect(logs).toContain('"msg":"stopped"');
  }, 180_000);

  test('the embedded database on a volume: killed with SIGKILL, the container starts again on it and the account is still there', async () => {
    const port = await freePort();
    const volume = join(tempDir(), 'data');
    mkdirSync(volume);
    chownSync(volume, UID, UID);
    const id = await start(['-v', `${volume}:/data`, '-e', `PORT=${port}`, '-e', 'GOTRUE_MAILER_AUTOCONFIRM=true']);
    await waitReady(port, id, 120_000);
    const email = `embedded-${process.pid}@example.com`;
    expect((await call(port, 'POST', '/signup', { email, password: PASSWORD })).status).toBe(200);

    await ok(['kill', '-s', 'KILL', id]);
    await ok(['wait', id]);
    // The lock the killed server left names pid 1: the new server (pid 1 again, in a new pid
    // namespace) takes it once it has gone untouched for 20 s, instead of refusing forever.
    await ok(['start', id]);
    await waitReady(port, id, 120_000);
    const signin = await call(port, 'POST', '/token?grant_type=password', { email, password: PASSWORD });
    expect(signin.status, JSON.stringify(signin.json)).toBe(200);
    await ok(['stop', '-t', '30', id], 60_000);
    expect(await ok(['inspect', id, '--format', '{{.State.ExitCode}}'])).toBe('0');
  }, 300_000);

  test('no writable data directory: exit 1 with one line saying what to mount or set', async () => {
    const r = await podman(
      ['run', '--rm', '--network=host', '--read-only', '--tmpfs', '/tmp', '--user', '20000:20000', IMAGE],
      120_000,
    );
    expect(r.code).toBe(1);
    const lines = `${r.stdout}${r.stderr}`
      .trim()
      .split('\n')
      .filter((l) => !l.includes('systemd'));
    expect(lines).toEqual([
      "authsvc: cannot write the embedded database's directory /data/.authsvc (EACCES): mount a writable volume there, " +
        'set DATABASE_URL=pglite:///a/writable/directory, or use a Postgres server (DATABASE_URL=postgres://…).',
    ]);
  }, 180_000);
});
