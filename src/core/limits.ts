// Limits on what a request may carry, shared by the request layer and the provider room.

/**
 * Nesting a body may have. GoTrue's decoder stops at 10,000, but PGlite (WASM, a small stack)
 * fails on jsonb nested ~6,000 deep and Postgres near 12,000 (default max_stack_depth), and
 * jsonb operators recurse again: 1,000 is far beyond any real metadata and far below both.
 */
export const MAX_JSON_DEPTH = 1000;
