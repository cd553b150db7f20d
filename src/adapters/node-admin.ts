// `authsvc admin createuser|deleteuser` — GoTrue's admin commands (cmd/admin_cmd.go), through the
// same code as POST and DELETE /admin/users: the user gets its email identity, the password is
// hashed by the Node hasher, and both commands leave an audit entry (GoTrue's CLI writes neither
// identity nor audit entry).
import { parseArgs } from 'node:util';
import { adminCreateUser, adminDeleteUser } from '../admin/users.ts';
import { assertPasswordLength } from '../crypto/password-policy.ts';
import { findUserByEmail, findUserById, type UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { validateEmail } from '../accounts/validate.ts';
import { ApiError } from '../core/errors.ts';
import { auditLogSink } from '../telemetry/audit-log.ts';
import { createLogger } from '../telemetry/logger.ts';
import { DataDirError } from './data-dir-error.ts';
import { ConfigError, applyMigrations, buildNodeDeps, loadConfig, openDatabase } from './node.ts';

export const ADMIN_USAGE = `Usage:
  authsvc admin createuser <email> <password> [role] [--confirm] [--role R] [--admin] [--aud A]
  authsvc admin deleteuser <email|id> [--aud A]

  --confirm   mark the email address confirmed (implied by MAILER_AUTOCONFIRM)
  --role R    the user's role (default JWT_DEFAULT_GROUP_NAME); --admin: JWT_ADMIN_GROUP_NAME
  --aud A     audience (default JWT_AUD); -a A is the same`;

/** The actor of CLI actions in the audit log: GoTrue's admin pseudo-user, named after the tool. */
export const CLI_ACTOR = 'authsvc-cli';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A problem to report as `authsvc: <message>` with exit status 1. */
export class AdminCommandError extends Error {}

class UsageError extends Error {}

export interface CreateUserOptions {
  email: string;
  password: string;
  confirm: boolean;
  role?: string;
  aud?: string;
}

export async function createUserFromCli(deps: Deps, o: CreateUserOptions): Promise<UserRow> {
  const aud = o.aud ?? deps.config.jwt.aud;
  const email = validateEmail(o.email);
  // Named in the message (the API's 422 does not say which user it is).
  const existing = await findUserByEmail(deps.db, email, aud);
  if (existing)
    throw new AdminCommandError(`a user with email ${existing.email ?? email} already exists (id ${existing.id})`);
  const created = await adminCreateUser(
    deps,
    {
      email,
      password: o.password,
      role: o.role,
      aud,
      // GoTrue: `--confirm` or MAILER_AUTOCONFIRM.
      email_confirm: o.confirm || deps.config.mailer.autoconfirm,
    },
    { role: CLI_ACTOR, aud },
  );
  return (await findUserById(deps.db, String(created.id)))!;
}

/** GoTrue's order: the argument as an email address first, then as a user id. Hard delete. */
export async function deleteUserFromCli(deps: Deps, target: string, aud?: string): Promise<UserRow> {
  const byEmail = await findUserByEmail(deps.db, target, aud ?? deps.config.jwt.aud);
  const found = byEmail ?? (UUID_RE.test(target) ? await findUserById(deps.db, target.toLowerCase()) : undefined);
  if (!found) throw new AdminCommandError(`no user with email or id "${target}"`);
  await adminDeleteUser(deps, found.id, false, { role: CLI_ACTOR });
  return found;
}

interface Parsed {
  positional: string[];
  flags: Map<string, string | true>;
}

/** The admin commands' flags (node:util parseArgs); each command allows some of them. */
const FLAGS = {
  role: { type: 'string' },
  aud: { type: 'string', short: 'a' },
  confirm: { type: 'boolean' },
  admin: { type: 'boolean' },
} as const;

function parseFlags(args: string[], allowed: (keyof typeof FLAGS)[]): Parsed {
  const options = Object.fromEntries(allowed.map((k) => [k, FLAGS[k]]));
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (err) {
    // ERR_PARSE_ARGS_UNKNOWN_OPTION, _INVALID_OPTION_VALUE: its message names the flag.
    throw new UsageError((err as Error).message);
  }
  const flags = new Map<string, string | true>();
  for (const [k, v] of Object.entries(parsed.values)) {
    if (v === true) flags.set(k, true);
    else if (typeof v === 'string') {
      if (v === '') throw new UsageError(`--${k} needs a value`);
      flags.set(k, v);
    }
  }
  return { positional: parsed.positionals, flags };
}

const str = (v: string | true | undefined) => (typeof v === 'string' ? v : undefined);

async function withDatabase<T>(fn: (deps: Deps) => Promise<T>): Promise<T> {
  const { config, notices } = loadConfig();
  // Diagnostics go to stderr: stdout carries only the command's result.
  const logger = createLogger(config.log.level, (line) => process.stderr.write(line + '\n'));
  // The server's start-up notices; for a one-shot command they are noise unless asked for.
  for (const n of notices) logger.debug(`local mode: ${n}`);
  const db = await openDatabase(config);
  try {
    const applied = await applyMigrations(db);
    if (applied.length) logger.info(`applied ${applied.length} migration(s)`, { migrations: applied });
    const deps = await buildNodeDeps(config, db, logger);
    // As the server does: audit entries are logged (on stderr here), rows as AUDIT_LOG_DISABLE_POSTGRES says.
    return await fn({ ...deps, db: { ...deps.db, audit: auditLogSink(logger, config.auditLog.disablePostgres) } });
  } finally {
    await db.close();
  }
}

/** Runs `authsvc admin …`; returns the exit status. */
export async function runAdminCommand(args: string[]): Promise<number> {
  const sub = args[0];
  if (sub === 'help' || sub === '--help' || sub === '-h') {
    process.stdout.write(ADMIN_USAGE + '\n');
    return 0;
  }
  try {
    if (sub === 'createuser') {
      const { positional, flags } = parseFlags(args.slice(1), ['confirm', 'admin', 'role', 'aud']);
      const [email, password, positionalRole, ...extra] = positional;
      if (!email || password === undefined) throw new UsageError('createuser needs <email> and <password>');
      if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
      if (positionalRole && flags.has('role')) throw new UsageError('give the role once: [role] or --role');
      // Input errors before the database is opened (the embedded one takes seconds to start).
      validateEmail(email);
      assertPasswordLength(password);
      const user = await withDatabase((deps) =>
        createUserFromCli(deps, {
          email,
          password,
          confirm: flags.has('confirm'),
          aud: str(flags.get('aud')),
          role:
            positionalRole ??
            str(flags.get('role')) ??
            (flags.has('admin') ? deps.config.jwt.adminGroupName : undefined),
        }),
      );
      const state = user.emailConfirmedAt ? 'confirmed' : 'unconfirmed';
      process.stdout.write(
        `Created user: ${user.email} (id ${user.id}, role ${user.role}, aud ${user.aud}, email ${state})\n`,
      );
      return 0;
    }
    if (sub === 'deleteuser') {
      const { positional, flags } = parseFlags(args.slice(1), ['aud']);
      if (positional.length !== 1) throw new UsageError('deleteuser needs exactly one <email|id>');
      const user = await withDatabase((deps) => deleteUserFromCli(deps, positional[0]!, str(flags.get('aud'))));
      process.stdout.write(`Removed user: ${user.email || user.phone || ''} (id ${user.id})\n`);
      return 0;
    }
    throw new UsageError(sub ? `unknown admin command "${sub}"` : 'missing admin command');
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`authsvc admin: ${err.message}\n\n${ADMIN_USAGE}\n`);
      return 2;
    }
    if (
      err instanceof AdminCommandError ||
      err instanceof ApiError ||
      err instanceof ConfigError ||
      err instanceof DataDirError
    ) {
      process.stderr.write(`authsvc: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
