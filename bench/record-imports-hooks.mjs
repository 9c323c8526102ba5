// Module hooks (they run on the loader's own thread): append the URL of each module loaded through
// `import` to the file given by record-imports.mjs, one a line. Synchronous, so nothing is lost
// when the process exits. Modules a CommonJS module require()s do not pass here.

import { appendFileSync } from "node:fs";

let file;

export function initialize(data) {
  file = data.file;
}

export async function load(url, context, nextLoad) {
  appendFileSync(file, `${url}\n`);
  return nextLoad(url, context);
}
