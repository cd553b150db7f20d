// `node --import ./record-modules.mjs …`: every ES module the process loads is written to stderr
// as `module-loaded <url>` (the disabled-telemetry test checks that no SDK code is among them).
import { register } from 'node:module';

register('./record-modules-hooks.mjs', import.meta.url);
