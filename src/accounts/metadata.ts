// user_metadata and app_metadata updates, as GoTrue applies them (PUT /user, the admin API, SSO).

/** `data` merges into the map; a null value deletes the key. */
export function mergeMetadata(
  base: Record<string, unknown> | null,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...(base ?? {}) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
