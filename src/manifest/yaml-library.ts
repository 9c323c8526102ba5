// The yaml library, for the texts the fast block reader leaves to it (load-yaml.ts). Reached through
// this one function so that the bundled binary can load it at its first call instead of at start-up:
// most manifests never need it (scripts/bundle-action.mjs replaces this module in the bundle).

import * as yaml from "../vendor/yaml.js";

/** The yaml library's module. */
export function yamlLibrary(): typeof yaml {
  return yaml;
}
