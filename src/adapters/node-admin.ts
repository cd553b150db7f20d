// `authsvc admin createuser|deleteuser` — GoTrue's admin commands (cmd/admin_cmd.go), through the
// same code as POST and DELETE /admin/users: the user gets its email identity, the password is
// hashed by the Node hasher, and both commands leave an audit entry (GoTrue's CLI writes neither
// identity nor audit entry).
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

const VALUE_FLAGS: Record<string, string> = { '--role': 'role', '--aud': 'aud', '-a': 'aud' };
const BOOL_FLAGS: Record<string, string> = { '--confirm': 'confirm', '--admin': 'admin' };

function parseArgs(args: string[], allowed: string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      positional.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const eqAt = arg.indexOf('=');
    const name = eqAt > 0 ? arg.slice(0, eqAt) : arg;
    const key = VALUE_FLAGS[name] ?? BOOL_FLAGS[name];
    if (!key || !allowed.includes(key)) throw new UsageError(`unknown flag ${name}`);
    if (BOOL_FLAGS[name]) {
      if (eqAt > 0) throw new UsageError(`${name} takes no value`);
      flags.set(key, true);
    } else {
      const value = eqAt > 0 ? arg.slice(eqAt + 1) : args[++i];
      if (value === undefined || value === '') throw new UsageError(`${name} needs a value`);
      flags.set(key, value);
    }
  }
  return { positional, flags };
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
      const { positional, flags } = parseArgs(args.slice(1), ['confirm', 'admin', 'role', 'aud']);
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
      const { positional, flags } = parseArgs(args.slice(1), ['aud']);
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
