// Hooks (HOOK_<KIND>_*): HTTP(S) endpoints (Standard Webhooks) or Postgres functions called at
// GoTrue's extension points (docs/hooks.md).
import { bool, each, opt, setting, withDefault } from '../setting.ts';
import { HOOK_KINDS } from '../kinds.ts';
import { parseHookSecrets, parseHookUri } from '../values.ts';

export const hooks = {
  hooks: each(HOOK_KINDS, (kind) => {
    const what = kind.toLowerCase().replaceAll('_', ' ');
    return {
      enabled: setting(`HOOK_${kind}_ENABLED`, bool(false), 'false', `Calls the ${what} hook (docs/hooks.md).`),
      uri: setting(
        `HOOK_${kind}_URI`,
        opt(parseHookUri),
        '',
        `The ${what} hook: pg-functions://<db>/<schema>/<function>, https://… (http:// only on localhost).`,
      ).map((v) => v ?? ''),
      secrets: setting(
        `HOOK_${kind}_SECRETS`,
        withDefault(parseHookSecrets, []),
        '',
        `Standard Webhooks secrets of the ${what} hook (v1,whsec_<base64>), several separated by |; the HTTP request is signed with each.`,
        { secret: true },
      ),
    };
  }),
};
