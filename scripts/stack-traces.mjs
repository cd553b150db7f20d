// Stack traces of the compiled server name the TypeScript lines, with the source maps read only
// when a stack is first formatted. Node's own support (`process.setSourceMapsEnabled(true)`)
// parses every map when its module loads and keeps the decoded mappings: about 8 MB of an idle
// server's 87 MB, for stacks most processes never print. Here a map is parsed the first time a
// frame of its file is formatted, by Node's own SourceMap class (node:module), and kept from then on.
// Plain JavaScript: bin/authsvc.js imports it without a TypeScript loader.
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Formats stacks with frames of files under `dir` (a directory of built .js files, each with its
 * .js.map beside it) mapped to their sources. Other frames are left as V8 writes them.
 */
export function installStackMapping(dir) {
  const prefix = pathToFileURL(dir).href.replace(/\/?$/, '/');
  /** @type {Map<string, SourceMap | null>} */
  const maps = new Map();
  const mapOf = (file) => {
    const url = file.startsWith('file:') ? file : file.startsWith('/') ? pathToFileURL(file).href : file;
    if (!url.startsWith(prefix)) return null;
    let map = maps.get(url);
    if (map === undefined) {
      try {
        const payload = JSON.parse(readFileSync(fileURLToPath(`${url}.map`), 'utf8'));
        // Sources are relative to the map (../../src/app.ts): resolved to paths, as Node prints them.
        payload.sources = payload.sources.map((s) => fileURLToPath(new URL(s, url)));
        map = new SourceMap(payload);
      } catch {
        map = null;
      }
      maps.set(url, map);
    }
    return map;
  };
  const frame = (f) => {
    const text = String(f);
    const file = f.getFileName();
    const map = file ? mapOf(file) : null;
    const line = f.getLineNumber();
    const column = f.getColumnNumber();
    if (!map || line == null || column == null) return text;
    const origin = map.findOrigin(line, column);
    if (!origin?.fileName) return text;
    const where = `${origin.fileName}:${origin.lineNumber}:${origin.columnNumber}`;
    // V8's text ends with "(file:line:col)" or is "file:line:col" (or "async file:line:col").
    const generated = `${file}:${line}:${column}`;
    const i = text.lastIndexOf(generated);
    return i >= 0 ? text.slice(0, i) + where + text.slice(i + generated.length) : text;
  };
  Error.prepareStackTrace = (error, frames) => {
    let head;
    try {
      head = Error.prototype.toString.call(error);
    } catch {
      head = 'Error';
    }
    return frames.length === 0 ? head : `${head}\n${frames.map((f) => `    at ${frame(f)}`).join('\n')}`;
  };
}
