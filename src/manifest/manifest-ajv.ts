// How ajv is set up for schemas/manifest.schema.json, shared by the build (which precompiles the
// validator) and a run from source (which compiles it): one place, so both check the same way.

import type { Ajv, Options } from "ajv";

/** The options the manifest validator is compiled with, at build time and at run time alike. */
export const MANIFEST_AJV_OPTIONS = { allErrors: true, strict: true, allowUnionTypes: true } as const;

/** The ajv-formats formats the schema uses (`format: uri` on server.base_url). */
export const MANIFEST_FORMATS = ["uri"] as const;

/** ajv-formats' default export, which adds the named formats to an ajv instance. */
type AddFormats = (ajv: Ajv, formats: (typeof MANIFEST_FORMATS)[number][]) => Ajv;

/** An ajv instance ready for the manifest schema; `extra` adds build-only options (code output). */
export function createManifestAjv(AjvClass: typeof Ajv, addFormats: AddFormats, extra: Options = {}): Ajv {
  const ajv = new AjvClass({ ...MANIFEST_AJV_OPTIONS, ...extra });
  addFormats(ajv, [...MANIFEST_FORMATS]);
  return ajv;
}
