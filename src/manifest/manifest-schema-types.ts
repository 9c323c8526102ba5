// The manifest's TypeScript types, generated from schemas/manifest.schema.json; do not edit.
// Regenerate after editing the schema: npm run generate

/**
 * A pcsync manifest: the plugin configs that projects should have. `${NAME}` and `${NAME:-default}` are replaced in values and project keys before validation, NAME read only from what is handed to pcsync: PCSYNC_VAR_NAME in the environment, then --var-file FILE, then --var NAME=VALUE (no other environment variable; never the API key). `$${` writes a literal `${`; an interpolated value takes the type its field expects, so `plugin: ${PLUGIN_ID}` is an integer.
 */
export interface Manifest {
  /**
   * Manifest format version. Always 1.
   */
  version: 1;
  /**
   * Connection settings for the service (optional).
   */
  server?: ManifestServer;
  /**
   * The projects to manage, keyed by project id (a decimal number as a string, e.g. "1") or "@current" for the API key's first project.
   */
  projects?: {
    /**
     * The families of one project.
     */
    [k: string]: ManifestProject | undefined;
  };
}
/**
 * Where the Plugin Configuration Service is. --base-url and PCSYNC_BASE_URL take precedence.
 */
export interface ManifestServer {
  /**
   * Base URL of the service, e.g. https://app.example.com. Plain http:// is refused for non-loopback hosts unless --insecure-http.
   */
  base_url?: string;
}
/**
 * The config families of one project. A family left out is not managed.
 */
export interface ManifestProject {
  /**
   * Regular plugins (transformations, exports...).
   */
  plugin_configs?: ManifestFamily;
  /**
   * Site apps (frontend plugins).
   */
  pipeline_frontend_apps_configs?: ManifestFamily;
}
/**
 * The configs of one family of one project.
 */
export interface ManifestFamily {
  /**
   * Delete the remote records of this family that no config below claims. Default false: unlisted records are left alone.
   */
  prune?: boolean;
  /**
   * The configs of this family. Give every config an `order`, or none (then the 1-based list position is the order).
   */
  configs: ManifestConfig[];
}
/**
 * One plugin config. Fields left out are not managed.
 */
export interface ManifestConfig {
  /**
   * The config's identity within its project and family: unique, at most 400 characters, no control characters.
   */
  name: string;
  /**
   * The id of the plugin this config runs.
   */
  plugin: number;
  /**
   * Whether the config runs. Left out: not managed (new records start disabled).
   */
  enabled?: boolean;
  /**
   * Free text shown in the service, at most 1000 characters; null clears it.
   */
  description?: string | null;
  /**
   * The id of the action whose matching events the config processes; null for all events.
   */
  match_action?: number | null;
  /**
   * Explicit position among the family's configs (lower runs first). Give it on every config of the family or on none.
   */
  order?: number;
  /**
   * Pin an existing record by id: adopt it, or rename it. Otherwise the record is matched by name.
   */
  id?: number;
}
