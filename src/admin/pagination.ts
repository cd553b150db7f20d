// Paging and sorting of the admin lists (users, audit log) as GoTrue's paginate() and addPaginationHeaders:
// `page`/`per_page` read as Go's strconv.ParseUint, the Link header rebuilt as url.Values.Encode.
import { validationFailed } from '../core/errors.ts';

export interface Page {
  page: bigint;
  perPage: bigint;
}

const MAX_UINT64 = 2n ** 64n - 1n;

/** GoTrue's strconv.ParseUint (base 10) with its error text. */
function parseUint(value: string): bigint {
  const quoted = JSON.stringify(value);
  if (!/^[0-9]+$/.test(value))
    throw validationFailed(`Bad Pagination Parameters: strconv.ParseUint: parsing ${quoted}: invalid syntax`);
  const n = BigInt(value);
  if (n > MAX_UINT64)
    throw validationFailed(`Bad Pagination Parameters: strconv.ParseUint: parsing ${quoted}: value out of range`);
  return n;
}

/** `page` (default 1) and `per_page` (default 50, > 0); empty values count as absent, as in Go. */
export function parsePage(page: string | undefined, perPage: string | undefined): Page {
  const p = page ? parseUint(page) : 1n;
  const pp = perPage ? parseUint(perPage) : 50n;
  if (pp === 0n) throw validationFailed('Bad Pagination Parameters: per_page must be greater than 0');
  return { page: p, perPage: pp };
}

/** LIMIT and OFFSET of a page; pop's paginator reads page 0 as page 1 (the Link header still says what was asked). */
export function pageBounds(p: Page): { limit: bigint; offset: bigint } {
  const page = p.page < 1n ? 1n : p.page;
  return { limit: p.perPage, offset: (page - 1n) * p.perPage };
}
/** `sort=created_at [asc|desc]` (repeatable; created_at is the only field): true for ascending. */
export function parseSort(values: string[]): boolean {
  let ascending: boolean | undefined;
  for (const value of values) {
    const space = value.indexOf(' ');
    const field = space < 0 ? value : value.slice(0, space);
    if (field !== 'created_at') throw validationFailed(`Bad Sort Parameters: bad field for sort '${field}'`);
    let asc = false;
    if (space >= 0) {
      const dir = value.slice(space + 1);
      if (dir.toUpperCase() === 'ASC') asc = true;
      else if (dir.toUpperCase() !== 'DESC') {
        throw validationFailed(`Bad Sort Parameters: bad direction for sort '${dir}', only 'asc' and 'desc' allowed`);
      }
    }
    ascending ??= asc;
  }
  return ascending ?? false;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** A bound for a driver that takes numbers: anything past 2^53 is as good as infinite here. */
export const toSafeNumber = (n: bigint) => Number(n > MAX_SAFE ? MAX_SAFE : n);

/** Go's url.QueryEscape: unreserved characters stay, space becomes `+`, everything else %XX. */
function goQueryEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

/**
 * GoTrue's addPaginationHeaders: the request URL with `page` replaced, query re-encoded as Go's
 * url.Values.Encode does (keys sorted) — `rel="next"` while pages remain, always `rel="last"`.
 */
export function paginationHeaders(requestUrl: string, page: Page, total: number): { link: string; totalCount: string } {
  const url = new URL(requestUrl);
  const totalPages = (BigInt(total) + page.perPage - 1n) / page.perPage;
  const withPage = (n: bigint) => {
    const values = new Map<string, string[]>();
    for (const [k, v] of url.searchParams) values.set(k, [...(values.get(k) ?? []), v]);
    values.set('page', [String(n)]);
    const query = [...values.keys()]
      .sort()
      .flatMap((k) => values.get(k)!.map((v) => `${goQueryEscape(k)}=${goQueryEscape(v)}`));
    return `<${url.pathname}?${query.join('&')}>`;
  };
  let link = '';
  if (totalPages > page.page) link += `${withPage(page.page + 1n)}; rel="next", `;
  link += `${withPage(totalPages)}; rel="last"`;
  return { link, totalCount: String(total) };
}
