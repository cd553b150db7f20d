// Access tokens: signing keys, lifetime, claims and admin roles (JWT_*).
import { list, opt, text, textOr, withDefault, setting } from '../setting.ts';
import { parseJwtKeys, wholeSecondsOr } from '../values.ts';

export const jwt = {
  jwt: {
    secret: setting('JWT_SECRET', text(), 'required unless JWT_KEYS is set', 'HS256 secret used to sign tokens.', {
      secret: true,
    }),
    exp: setting('JWT_EXP', withDefault(wholeSecondsOr(3600), 3600), '3600', 'Access-token lifetime in seconds.'),
    // 'authenticated', not GoTrue's empty default: every Supabase deployment sets it, and
    // PostgREST row-level security expects it.
    aud: setting('JWT_AUD', textOr('authenticated'), 'authenticated', 'Default audience (aud claim) of new users.'),
    issuer: setting('JWT_ISSUER', text(), '', 'Issuer (iss) claim.'),
    keyId: setting('JWT_KEY_ID', text(), '', 'kid of the key made from JWT_SECRET.'),
    keys: setting('JWT_KEYS', opt(parseJwtKeys), '', 'JSON array of private JWKs; exactly one has "sign" in key_ops.', {
      secret: true,
    }),
    validMethods: setting(
      'JWT_VALID_METHODS',
      list(),
      'derived from the keys',
      'Algorithms accepted when verifying, comma-separated.',
    ),
    adminGroupName: setting('JWT_ADMIN_GROUP_NAME', textOr('admin'), 'admin', 'Name of the admin group.'),
    defaultGroupName: setting(
      'JWT_DEFAULT_GROUP_NAME',
      textOr('authenticated'),
      'authenticated',
      'Role (role claim) assigned to new users.',
    ),
    adminRoles: setting(
      'JWT_ADMIN_ROLES',
      list(['service_role', 'supabase_admin']),
      'service_role,supabase_admin',
      'Roles whose bearer may call admin endpoints.',
    ),
  },
};
