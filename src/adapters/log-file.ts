// LOG_FILE: log lines appended through a WriteStream (one write per line was a synchronous system
// call on the request path). The file is opened at start-up, so a bad path fails the start, not
// the first request. close() flushes what is buffered; the CLI awaits it before it exits, so the
// last lines of a SIGTERM stop reach the file. A line logged after close() is appended
// synchronously; lines still buffered when the process exits without close() (a crash) are
// written synchronously by the exit hook (one that had just reached the disk may appear twice).
import { appendFileSync, createWriteStream, openSync } from 'node:fs';

export interface LogFile {
  write(line: string): void;
  /** Writes what is buffered and closes the file. */
  close(): Promise<void>;
}

export function openLogFile(path: string, onError: (err: Error) => void): LogFile {
  const fd = openSync(path, 'a');
  const stream = createWriteStream(path, { fd, flags: 'a' });
  // Lines handed to the stream whose write has not completed, oldest first.
  const pending: string[] = [];
  let failed = false;
  let closing: Promise<void> | undefined;
  const onExit = () => {
    if (pending.length) {
      try {
        appendFileSync(path, pending.join(''));
      } catch {
        /* nowhere left to report it */
      }
    }
  };
  process.once('exit', onExit);
  stream.on('error', (err) => {
    if (failed) return;
    failed = true;
    pending.length = 0;
    onError(err);
  });
  return {
    write(line) {
      const text = line + '\n';
      if (closing) {
        try {
          appendFileSync(path, text);
        } catch {
          /* the file went away: stdout has the line */
        }
        return;
      }
      if (failed) return;
      pending.push(text);
      stream.write(text, () => {
        pending.shift();
      });
    },
    close() {
      closing ??= new Promise<void>((done) => {
        stream.end(() => {
          process.removeListener('exit', onExit);
          done();
        });
      });
      return closing;
    },
  };
}
