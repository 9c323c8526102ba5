// The yaml library, for the texts the fast block reader leaves to it. One function, so that the bundle
// loads it at its first call, not at start-up (scripts/bundle-action.mjs replaces this module).

import * as yaml from "../vendor/yaml.js";

export function yamlLibrary(): typeof yaml {
  return yaml;
}
