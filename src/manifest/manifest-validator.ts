// The ajv validator of schemas/manifest.schema.json. The build precompiles it
// (scripts/build-validators.mjs), so `pcsync validate` loads no schema compiler; from source it is
// compiled at first use, with the same options.

import type { ValidateFunction } from "ajv";
import { createManifestAjv } from "./manifest-ajv.js";
import type { Manifest } from "./manifest-schema-types.js";
import { loadManifestSchema } from "./plain-manifest.js";

/** Written next to this module's build output by scripts/build-validators.mjs. */
const PRECOMPILED_MODULE = "./manifest-validator.generated.js";

// Only a missing file means "running from source": a generated module that fails to load (a
// dependency left out of the package, say) is a broken install and must say so.
const precompiled = await import(PRECOMPILED_MODULE).then(
  (module: { validate: ValidateFunction<Manifest> }) => module.validate,
  (error: unknown) => {
    if (isMissing(error, PRECOMPILED_MODULE)) return undefined;
    throw error;
  },
);

// From source nothing is precompiled: only then is the compiler imported, to compile at first use.
const compile = precompiled === undefined ? await importCompiler() : () => precompiled;

let validator: ValidateFunction<Manifest> | undefined;

export function getManifestValidator(): ValidateFunction<Manifest> {
  validator ??= compile();
  return validator;
}

async function importCompiler(): Promise<() => ValidateFunction<Manifest>> {
  const { Ajv } = await import("ajv");
  const addFormats = (await import("ajv-formats")).default.default;
  return () => createManifestAjv(Ajv, addFormats).compile<Manifest>(loadManifestSchema());
}

function isMissing(error: unknown, specifier: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === "ERR_MODULE_NOT_FOUND" && String(message).includes(specifier.replace("./", ""));
}
