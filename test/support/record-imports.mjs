// Preloaded with `node --import` by test/support/imports.ts: registers record-imports-hooks.mjs,
// which writes every module the process loads through `import` to a file.

import { register } from "node:module";

register("./record-imports-hooks.mjs", import.meta.url, {
  data: { file: process.env.PCSYNC_TEST_IMPORTS_FILE },
});
