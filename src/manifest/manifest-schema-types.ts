// The manifest's TypeScript types, generated from schemas/manifest.schema.json; do not edit.
// Regenerate after editing the schema: npm run generate

/**
 * Fields never compared and never written once the record exists (a create still sends them); the plan counts the differences it ignored.
 *
 * Items: A field of the record.
 */
export type ManifestIgnoreFields = ("plugin" | "enabled" | "description" | "match_action" | "order")[];
/**
 * Names or `*` globs of records of this family that are never deleted (by prune or `deleted: true`) unless `--allow-destroy NAME` names them; unlike a config's `protect: true`, this survives the config's removal from the manifest. Protection adds up across templates, project sets and the project.
 *
 * Items: A record name, or a glob where `*` matches any run of characters.
 */
export type ManifestProtectNames = string[];
/**
 * `listed` (default): fields a config leaves out are not managed. `all`: they take the service's defaults (enabled: false, description: null, match_action: null) and are managed, so a hand edit of any field is drift. The project's value wins over a set's, which wins over the templates'.
 */
export type ManifestFieldsMode = "listed" | "all";
/**
 * Names of templates (defined under `templates:`), applied in this order.
 *
 * Items: A template name.
 */
export type ManifestTemplateNames = string[];

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
   * Who manages the records of this manifest's families, when several manifests (teams) share one family: letters, digits and `-_.`, at most 40. pcsync marks every record it creates or updates with `[pcsync owner=NAME]` at the end of its description (stripped wherever pcsync compares, prints, exports or saves a description); `prune` deletes only records with this mark; a config that matches a record marked by another owner is refused unless `--takeover`; a matching record with no mark is adopted. One owner per run: every file that sets it sets the same.
   */
  owner?: string;
  rollout?: Rollout;
  /**
   * Named, reusable configs per family, applied to projects with `use:` (in a project or a project set). A template's family block is a family block whose configs may not pin `id:` (ids belong to one project). Templates may be defined in one manifest file and used from another.
   */
  templates?: {
    /**
     * One template: the families it provides.
     */
    [k: string]: ManifestTemplate | undefined;
  };
  /**
   * Blocks that apply to many projects at once: an explicit list of project ids, or `all` (every project the API key can see, read at plan time), minus `except`. A project also named under `projects:` gets the set's configs first; its own values win.
   */
  project_sets?: ManifestProjectSet[];
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
 * How `apply` reaches the projects its plan changes: in waves, each written, re-read, baked and judged healthy on its plugin configs' logs before the next starts; a wave that fails halts the rollout and, by default, rolls back every wave applied. At most one file of a manifest sets it.
 */
export interface Rollout {
  /**
   * The waves, in order. Every project the plan changes must be in exactly one: the last wave usually says `percent: 100`.
   *
   * @minItems 1
   * @maxItems 100
   */
  waves: [RolloutWave, ...RolloutWave[]];
  /**
   * After a wave's writes, wait this long before judging it (`30s`, `10m`, `1h`; `0s` judges at once). Default `10m`.
   */
  bake?: string;
  /**
   * What a wave is judged on, per project: `logs` (the default when `health` names no signal), `prometheus`, or both, in which case a project passes only if it passes each.
   */
  health?: {
    /**
     * A PromQL instant query, run against Prometheus once per project after the bake: `{{project}}` in it is the project's id (and `{{window}}` the time since the wave's writes, e.g. `95s`); it must give one value, and a value over `max` fails the project.
     */
    prometheus?: {
      /**
       * Prometheus's base URL (`http://prometheus:9090`); `/api/v1/query` is asked under it. No user or password in it: it is written to the plan and the journal.
       */
      url: string;
      /**
       * The PromQL query, holding `{{project}}`: e.g. `sum(increase(errors_total{project="{{project}}"}[{{window}}]))`.
       */
      query: string;
      /**
       * A project fails when its value exceeds this.
       */
      max: number;
      /**
       * A project the query gives no value for (no series, NaN, or Prometheus not answering) passes (said in the output). Default false.
       */
      allow_unknown?: boolean;
      /**
       * For a Prometheus behind an authenticating proxy: the name of the environment variable that holds a token, sent as `Authorization: Bearer <token>`. The token itself never goes in the manifest, the plan or the journal, and is never printed.
       */
      bearer_token_env?: string;
      /**
       * For a Prometheus that asks for a user and password (its `--web.config.file` `basic_auth_users`): the user, and the name of the environment variable that holds the password. Not with `bearer_token_env`.
       */
      basic_auth?: {
        /**
         * The user Prometheus knows.
         */
        username: string;
        /**
         * The name of the environment variable that holds the password.
         */
        password_env: string;
      };
    };
    /**
     * The logs endpoint of each plugin config the wave created or updated: the share of ERROR entries among the entries logged since its write.
     */
    logs?: {
      /**
       * A project fails when its ERROR entries / all its entries logged since the wave's writes exceed this. Default 0.05.
       */
      max_error_ratio?: number;
      /**
       * Fewer entries than this (over the project's changed configs): its health is unknown, which fails it unless `allow_unknown: true`. Default 20.
       */
      min_entries?: number;
      /**
       * A project with fewer than `min_entries` entries passes (said in the output). Default false.
       */
      allow_unknown?: boolean;
    };
  };
  /**
   * How many projects of one wave may fail; one more halts the rollout. Default 0.
   */
  failure_budget?: number;
  /**
   * `rollback` (default): every wave applied so far is rolled back through the journal, newest first; `halt`: stop there, leaving the waves written.
   */
  on_failure?: "rollback" | "halt";
}
/**
 * One wave: named projects, or the cumulative share of the plan's projects reached by its end.
 */
export interface RolloutWave {
  /**
   * The wave's name, shown in the plan and the progress; unique.
   */
  name: string;
  /**
   * These projects (manifest keys); a named project the plan does not change is skipped.
   *
   * @minItems 1
   */
  projects?: [string, ...string[]];
  /**
   * By the end of this wave, this share of the plan's projects (rounded up), earlier waves included; the projects it adds are chosen by a stable hash of the project id.
   */
  percent?: number;
}
/**
 * The families a template provides. A family left out is not touched by the template.
 */
export interface ManifestTemplate {
  /**
   * Regular plugins (transformations, exports...).
   */
  plugin_configs?: ManifestTemplateFamily;
  /**
   * Site apps (frontend plugins).
   */
  pipeline_frontend_apps_configs?: ManifestTemplateFamily;
}
/**
 * The configs a template provides for one family.
 */
export interface ManifestTemplateFamily {
  /**
   * Prune for the projects using this template, unless the project or a set says otherwise.
   */
  prune?: boolean;
  /**
   * `warn` or `heal`: what `pcsync watch` does on drift, for the projects using this template, unless the project or a set says otherwise.
   */
  drift?: "warn" | "heal";
  /**
   * The templated configs, in order. Give every config an `order`, or none.
   */
  configs: ManifestTemplateConfig[];
  /**
   * Names or `*` globs of records of this family that are never deleted (by prune or `deleted: true`) unless `--allow-destroy NAME` names them; unlike a config's `protect: true`, this survives the config's removal from the manifest. Protection adds up across templates, project sets and the project.
   */
  protect?: ManifestProtectNames;
  /**
   * `listed` (default): fields a config leaves out are not managed. `all`: they take the service's defaults (enabled: false, description: null, match_action: null) and are managed, so a hand edit of any field is drift. The project's value wins over a set's, which wins over the templates'.
   */
  fields?: ManifestFieldsMode;
}
/**
 * One templated plugin config: as a project's config, without `id:` (pin ids in a project's `overrides`).
 */
export interface ManifestTemplateConfig {
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
   * `true`: delete the record this config matches (refused for a protected record without --allow-destroy); nothing to do if it does not exist. Default false.
   */
  deleted?: boolean;
  /**
   * Never delete this record (by prune or `deleted: true`) unless `--allow-destroy NAME` names it; a plan that would is refused (exit 3).
   */
  protect?: boolean;
  /**
   * Fields never compared and never written once the record exists (a create still sends them); the plan counts the differences it ignored.
   */
  ignore_fields?: ManifestIgnoreFields;
}
/**
 * One block for many projects: the templates, family settings, overrides, omissions and configs they all get.
 */
export interface ManifestProjectSet {
  /**
   * A label for the set, used in messages and plan tracing.
   */
  name?: string;
  /**
   * The project ids of the set (a list), or `all`: every project the API key can see, read through the project listing at plan time.
   */
  projects: string | (string | number)[];
  /**
   * Project ids left out of the set.
   *
   * Items: A project id.
   */
  except?: (string | number)[];
  /**
   * Templates applied to every project of the set, in this order (before the project's own `use`).
   */
  use?: ManifestTemplateNames;
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
 * The configs of one family of one project (or project set). `configs` may be left out when a used template provides this family.
 */
export interface ManifestFamily {
  /**
   * Delete the remote records of this family that no config claims. Default false: unlisted records are left alone. The project's value wins over a set's, which wins over the templates'.
   */
  prune?: boolean;
  /**
   * What `pcsync watch` does when this family drifts: `warn` reports it, `heal` also applies the plan (with every safety guard). Wins over `--mode`. The project's value wins over a set's, which wins over the templates'.
   */
  drift?: "warn" | "heal";
  /**
   * The project's own configs of this family, after the templated ones. Give every config an `order` (templated ones included), or none (then the 1-based position in the expanded list is the order).
   */
  configs?: ManifestConfig[];
  /**
   * Change single fields of a templated config, by its name (any field but `name`; `id:` pins the record for this project).
   */
  overrides?: {
    [k: string]: ManifestConfigOverride | undefined;
  };
  /**
   * Names of templated configs to leave out of this project.
   *
   * Items: The name of a config a used template provides.
   */
  omit?: string[];
  /**
   * Names or `*` globs of records of this family that are never deleted (by prune or `deleted: true`) unless `--allow-destroy NAME` names them; unlike a config's `protect: true`, this survives the config's removal from the manifest. Protection adds up across templates, project sets and the project.
   */
  protect?: ManifestProtectNames;
  /**
   * `listed` (default): fields a config leaves out are not managed. `all`: they take the service's defaults (enabled: false, description: null, match_action: null) and are managed, so a hand edit of any field is drift. The project's value wins over a set's, which wins over the templates'.
   */
  fields?: ManifestFieldsMode;
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
  /**
   * `true`: delete the record this config matches (refused for a protected record without --allow-destroy); nothing to do if it does not exist. Default false.
   */
  deleted?: boolean;
  /**
   * Never delete this record (by prune or `deleted: true`) unless `--allow-destroy NAME` names it; a plan that would is refused (exit 3).
   */
  protect?: boolean;
  /**
   * Fields never compared and never written once the record exists (a create still sends them); the plan counts the differences it ignored.
   */
  ignore_fields?: ManifestIgnoreFields;
}
/**
 * Fields that replace the templated config's values for this project (or set).
 */
export interface ManifestConfigOverride {
  /**
   * The id of the plugin this config runs.
   */
  plugin?: number;
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
  /**
   * `true`: delete the record this config matches (refused for a protected record without --allow-destroy); nothing to do if it does not exist. Default false.
   */
  deleted?: boolean;
  /**
   * Never delete this record (by prune or `deleted: true`) unless `--allow-destroy NAME` names it; a plan that would is refused (exit 3).
   */
  protect?: boolean;
  /**
   * Fields never compared and never written once the record exists (a create still sends them); the plan counts the differences it ignored.
   */
  ignore_fields?: ManifestIgnoreFields;
}
/**
 * The config families of one project. A family left out is not managed.
 */
export interface ManifestProject {
  /**
   * Templates this project uses, applied in this order after those of the project sets it is in.
   */
  use?: ManifestTemplateNames;
  /**
   * Regular plugins (transformations, exports...).
   */
  plugin_configs?: ManifestFamily;
  /**
   * Site apps (frontend plugins).
   */
  pipeline_frontend_apps_configs?: ManifestFamily;
}
