// Audit entries in the log: each one a GoTrue `audit_event` line, with the request's id (the
// logger is the request's child), besides or instead of the audit_log_entries row.
import type { AuditSink } from '../db/database.ts';
import type { Logger } from './logger.ts';

/**
 * GoTrue's `audit_event` log line: the payload plus the entry's id, IP and time, under
 * `auth_audit_event`, at info level.
 */
export function auditLogSink(logger: Logger, disablePostgres: boolean): AuditSink {
  const logs = logger.level === 'info' || logger.level === 'debug';
  return {
    disablePostgres,
    logs,
    log: (r) =>
      logs &&
      logger.info('audit_event', {
        auth_audit_event: {
          ...r.payload,
          audit_log_id: r.id,
          ip_address: r.ip,
          created_at: r.created_at.toISOString(),
        },
      }),
  };
}
