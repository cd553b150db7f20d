// `authsvc doctor [--json]` and `authsvc hash-refresh-tokens`: moving a database over from GoTrue
// (docs/moving-from-gotrue.md). doctor changes nothing and applies no migration; it exits 1 when
// it finds a problem (secrets the configured keys do not open).
import process from 'node:process';
import { doctorReport, formatDoctorReport } from '../admin/doctor.ts';
import { legacyRefreshDigest } from '../crypto/gotrue-refresh-token.ts';
import { loadKeySet } from '../crypto/jwt.ts';
import { hashLegacyRefreshTokens } from '../db/gotrue-tokens.ts';
import { loadMigrations } from './migrations-fs.ts';
import { loadConfig, openDatabase } from './node.ts';

export async function runDoctor(args: string[]): Promise<number> {
  const { config } = loadConfig();
  const db = await openDatabase(config);
  try {
    const report = await doctorReport(db, config, loadMigrations());
    process.stdout.write(
      (args.includes('--json') ? JSON.stringify(report, null, 2) : formatDoctorReport(report)) + '\n',
    );
    return report.problems.length > 0 ? 1 : 0;
  } finally {
    await db.close();
  }
}

/**
 * Once GoTrue is retired for good: every legacy refresh token still in clear is replaced by its
 * keyed digest (it keeps refreshing in authsvc; GoTrue could no longer find it).
 */
export async function runHashRefreshTokens(): Promise<number> {
  const { config } = loadConfig();
  const keys = await loadKeySet(config.jwt);
  const db = await openDatabase(config);
  try {
    const n = await hashLegacyRefreshTokens(db, (token) => legacyRefreshDigest(keys.refreshChildKey, token));
    process.stdout.write(`hashed ${n} refresh token row(s) that held GoTrue tokens in clear\n`);
    return 0;
  } finally {
    await db.close();
  }
}
