// Go's time.ParseDuration, so GoTrue configurations (`1m30s`, `10s`, `1.5h`) keep working unchanged.

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC Greek mu: Go accepts both spellings
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const isDigit = (ch: string | undefined): boolean => ch !== undefined && ch >= '0' && ch <= '9';

/** Parses Go duration syntax (`300ms`, `-1.5h`, `2h45m`, `0`) into milliseconds. Throws on bad input. */
export function parseGoDuration(s: string): number {
  const original = s;
  const invalid = () => new Error(`invalid duration "${original}"`);
  let sign = 1;
  let i = 0;
  if (s[0] === '-' || s[0] === '+') {
    sign = s[0] === '-' ? -1 : 1;
    i = 1;
  }
  // Go special-cases a bare zero: it is the only number allowed without a unit.
  if (s.slice(i) === '0') return 0;
  if (i === s.length) throw invalid();

  let total = 0;
  while (i < s.length) {
    const start = i;
    while (isDigit(s[i])) i++;
    const hasInt = i > start;
    if (s[i] === '.') {
      i++;
      const fracStart = i;
      while (isDigit(s[i])) i++;
      // Go accepts `5.h` and `.5h`, but not a lone `.`.
      if (!hasInt && i === fracStart) throw invalid();
    } else if (!hasInt) {
      throw invalid();
    }
    const value = Number(s.slice(start, i));

    const unitStart = i;
    while (i < s.length && s[i] !== '.' && !isDigit(s[i])) i++;
    const unit = s.slice(unitStart, i);
    if (unit === '') throw new Error(`missing unit in duration "${original}"`);
    const factor = UNIT_MS[unit];
    if (factor === undefined) throw new Error(`unknown unit "${unit}" in duration "${original}"`);
    total += value * factor;
  }
  return sign * total;
}

const BARE_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/**
 * Seconds from either a bare number (`90`, `0.5`, as GoTrue's integer-second settings are written)
 * or Go duration syntax (`1m30s`, as its time.Duration settings are written).
 */
export function parseDurationSeconds(s: string): number {
  if (BARE_NUMBER.test(s)) return Number(s);
  return parseGoDuration(s) / 1000;
}
