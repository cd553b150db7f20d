// The Workers bundle has no file system: every file in migrations/ is imported here as text
// (wrangler.toml's Text rule). test/runtime/workers-bundle.test.ts fails when a migration is missing here.
import m0001 from '../../migrations/0001_init.sql';
import m0002 from '../../migrations/0002_rate_limits.sql';
import m0003 from '../../migrations/0003_oauth_flow_state.sql';
import m0004 from '../../migrations/0004_link_tokens.sql';
import m0005 from '../../migrations/0005_mfa.sql';
import m0006 from '../../migrations/0006_mfa_recovery_codes.sql';
import m0007 from '../../migrations/0007_webauthn.sql';
import m0009 from '../../migrations/0009_oauth_server.sql';
import m0010 from '../../migrations/0010_gotrue_columns.sql';
import m0011 from '../../migrations/0011_custom_oauth_providers.sql';
import m0012 from '../../migrations/0012_saml_sso.sql';
import m0013 from '../../migrations/0013_mfa_factor_lockout.sql';
import m0014 from '../../migrations/0014_web3_used_messages.sql';
import m0015 from '../../migrations/0015_linking_session_sso_domains.sql';
import m0016 from '../../migrations/0016_oauth_client_metadata_documents.sql';
import m0017 from '../../migrations/0017_provider_tokens.sql';
import type { Migration } from '../db/migrate.ts';

export const BUNDLED_MIGRATIONS: readonly Migration[] = [
  { version: '0001_init', sql: m0001 },
  { version: '0002_rate_limits', sql: m0002 },
  { version: '0003_oauth_flow_state', sql: m0003 },
  { version: '0004_link_tokens', sql: m0004 },
  { version: '0005_mfa', sql: m0005 },
  { version: '0006_mfa_recovery_codes', sql: m0006 },
  { version: '0007_webauthn', sql: m0007 },
  { version: '0009_oauth_server', sql: m0009 },
  { version: '0010_gotrue_columns', sql: m0010 },
  { version: '0011_custom_oauth_providers', sql: m0011 },
  { version: '0012_saml_sso', sql: m0012 },
  { version: '0013_mfa_factor_lockout', sql: m0013 },
  { version: '0014_web3_used_messages', sql: m0014 },
  { version: '0015_linking_session_sso_domains', sql: m0015 },
  { version: '0016_oauth_client_metadata_documents', sql: m0016 },
  { version: '0017_provider_tokens', sql: m0017 },
];
