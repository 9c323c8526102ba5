// How ajv is set up for schemas/manifest.schema.json, shared by the build (which precompiles the
// validator) and a run from source (which compiles it): one place, so both check the same way.

import type { Ajv, Options } from "ajv";

/** ajv-formats' default export. */
type AddFormats = (ajv: Ajv, formats: "uri"[]) => Ajv;

/** `extra` adds build-only options (code output). */
export function createManifestAjv(AjvClass: typeof Ajv, addFormats: AddFormats, extra: Options = {}): Ajv {
  const ajv = new AjvClass({ allErrors: true, strict: true, allowUnionTypes: true, ...extra });
  // `format: uri` on server.base_url.
  addFormats(ajv, ["uri"]);
  return ajv;
}
