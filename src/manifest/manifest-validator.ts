// The ajv validator of schemas/manifest.schema.json. The build precompiles it
// (scripts/build-validators.mjs), so `pcsync validate` loads no schema compiler; from source (the
// tests) it is compiled at first use, with the same options (src/precompiled.ts has the rule).

import type { ValidateFunction } from "ajv";
import { precompiledValidator } from "../precompiled.js";
import { createManifestAjv } from "./manifest-ajv.js";
import type { Manifest } from "./manifest-schema-types.js";
import { loadManifestSchema } from "./plain-manifest.js";

/** The manifest validator; a literal import, so that the action's bundle holds the generated module. */
export const getManifestValidator: () => ValidateFunction<Manifest> = await precompiledValidator(
  import("./manifest-validator.generated.js"),
  "the manifest validator",
  import.meta.url,
  async () => {
    const { Ajv } = await import("ajv");
    const addFormats = (await import("ajv-formats")).default.default;
    return () => createManifestAjv(Ajv, addFormats).compile<Manifest>(loadManifestSchema());
  },
);
