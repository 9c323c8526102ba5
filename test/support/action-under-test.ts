// The action as a workflow gets it at a ref: action.yml beside action-dist/pcsync.mjs. Tests run
// the bundle the build just made (dist/bundle/, also the npm package's bin), so they test the source as it is; CI's
// check-dist job makes sure the committed action-dist/ is that same bundle.

import { existsSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPOSITORY } from "./paths.js";

let directory: string | undefined;

/** A directory holding the action as checked out at a ref (links into this checkout). */
export function actionUnderTest(): string {
  if (directory !== undefined) return directory;
  const bundle = join(REPOSITORY, "dist", "bundle");
  if (!existsSync(join(bundle, "pcsync.mjs")))
    throw new Error("no dist/bundle/pcsync.mjs: run npm run build");
  directory = mkdtempSync(join(tmpdir(), "pcsync-action-ref-"));
  symlinkSync(bundle, join(directory, "action-dist"));
  for (const file of ["action.yml", "package.json", "schemas", "examples"]) {
    symlinkSync(join(REPOSITORY, file), join(directory, file));
  }
  return directory;
}
