// Writes a value read from the server so that the manifest loader reads it back unchanged: `${`
// starts a variable reference there, so a literal one is written `$${`.

import type { ExportedConfig } from "./build-manifest.js";

export function escapeInterpolation(text: string): string {
  // A function, not a string: in a replacement string `$$` would stand for one `$`.
  return text.replaceAll("${", () => "$${");
}

/** The config as manifest text: its string fields escaped. */
export function escapeConfig(config: ExportedConfig): ExportedConfig {
  return {
    ...config,
    name: escapeInterpolation(config.name),
    description: config.description === null ? null : escapeInterpolation(config.description),
  };
}
