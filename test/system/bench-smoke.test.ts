// `npm run bench -- --quick` end to end: every scenario, ceiling and the peer run, the table comes
// out, nothing fails, and the schemas it made are gone afterwards. About a minute on two cores
// and it needs the Postgres server, so it runs only with BENCH_SMOKE=1.
import { spawn } from 'node:child_process';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server.ts';

const enabled = process.env.BENCH_SMOKE === '1';
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function benchSchemas(): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const res = await client.query<{ nspname: string }>(
      "select nspname from pg_namespace where nspname like 'bench\\_%'",
    );
    return res.rows.map((r) => r.nspname).sort();
  } finally {
    await client.end();
  }
}

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const proc = spawn('npm', ['run', '--silent', 'bench', '--', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, BENCH_DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    proc.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    proc.once('close', (code) => done({ code, stdout, stderr }));
  });
}

describe.skipIf(!enabled)('npm run bench -- --quick', () => {
  it('prints the table with every scenario, ceiling and peer row, without errors, and cleans up', async () => {
    const before = await benchSchemas();
    const { code, stdout, stderr } = await runBench(['--quick']);
    expect(code, stderr).toBe(0);
    for (const row of [
      'signup (autoconfirm)',
      'password sign-in',
      'GET /health, 50/s alongside',
      'refresh',
      'GET /user',
      'mixed 1:20:200',
      'ceiling: bcrypt-10 verify',
      'ceiling: HS256 verify + PK select',
      'ceiling: hello JSON',
      'ceiling: better-auth scrypt verify',
      'better-auth sign-up',
      'better-auth sign-in',
      'better-auth get-session',
    ]) {
      expect(
        stdout.split('\n').some((l) => l.startsWith('| ') && l.includes(row)),
        row,
      ).toBe(true);
    }
    expect(stdout).toMatch(/^authsvc bench — \d+ cores .* GiB RAM/m);
    expect(stdout).toMatch(/^targets: \d+\/6 PASS$/m);
    // The errors column of every load row is 0 (ceiling rows leave it empty).
    const errorCells = stdout
      .split('\n')
      .filter((l) => l.startsWith('| '))
      .slice(1)
      .map((l) => l.split('|')[5]?.trim())
      .filter((c) => c !== undefined && c !== '' && c !== 'errors');
    expect(errorCells.length).toBeGreaterThan(0);
    for (const c of errorCells) expect(c).toBe('0');
    expect(await benchSchemas()).toEqual(before);
  }, 600_000);
});
