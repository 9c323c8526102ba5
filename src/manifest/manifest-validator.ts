// The ajv validator of schemas/manifest.schema.json: precompiled by the build, so `pcsync validate`
// loads no schema compiler; from source (the tests) compiled at first use (src/precompiled.ts).

import type { ValidateFunction } from "ajv";
import { precompiledValidator } from "../precompiled.js";
import { createManifestAjv } from "./manifest-ajv.js";
import type { Manifest } from "./manifest-schema-types.js";
import { loadManifestSchema } from "./plain-manifest.js";

/** A literal import, so that the action's bundle holds the generated module. */
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
