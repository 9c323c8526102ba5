// Preloaded with `node --import` by bench/scenarios-startup-imports.ts: registers record-imports-hooks.mjs,
// which writes every module the process loads through `import` to a file, and at exit adds the
// CommonJS modules it loaded through require() (ajv's compiler, undici's parts), which the hooks
// do not see.

import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { pathToFileURL } from "node:url";

const file = process.env.PCSYNC_TEST_IMPORTS_FILE;
register("./record-imports-hooks.mjs", import.meta.url, { data: { file } });

const { cache } = createRequire(import.meta.url);
process.on("exit", () => {
  const required = Object.keys(cache).map((path) => `${pathToFileURL(path).href}\n`);
  appendFileSync(file, required.join(""));
});
