// Manifest text for tests: from lines (so a test can name the line a config starts on), or made of
// many creates.

/** A YAML manifest from lines. */
export function manifest(...lines: string[]): string {
  return `${lines.join("\n")}\n`;
}

/** Project 1's plugin_configs of one `owner:`, each config given as its lines. */
export function ownerManifest(owner: string, ...configs: string[][]): string {
  return manifest(
    "version: 1",
    `owner: ${owner}`,
    "projects:",
    '  "1":',
    "    plugin_configs:",
    "      configs:",
    ...configs.flat(),
  );
}

/** A manifest creating `names` in project 1's plugin_configs (plugin 1, enabled), with no prune. */
export function createsManifest(names: readonly string[]): string {
  const configs = names.map(
    (name) => `        - name: ${name}\n          plugin: 1\n          enabled: true\n`,
  );
  return `version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n${configs.join("")}`;
}

export function names(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix} ${index + 1}`);
}
