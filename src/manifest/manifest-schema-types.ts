// The manifest's TypeScript types, generated from schemas/manifest.schema.json; do not edit.
// Regenerate after editing the schema: npm run generate

export type ManifestIgnoreFields = ("plugin" | "enabled" | "description" | "match_action" | "order")[];
export type ManifestProtectNames = string[];
export type ManifestFieldsMode = "listed" | "all";
export type ManifestTemplateNames = string[];

export interface Manifest {
  version: 1;
  server?: ManifestServer;
  owner?: string;
  rollout?: Rollout;
  templates?: {
    [k: string]: ManifestTemplate | undefined;
  };
  project_sets?: ManifestProjectSet[];
  projects?: {
    [k: string]: ManifestProject | undefined;
  };
}
export interface ManifestServer {
  base_url?: string;
}
export interface Rollout {
  /**
   * @minItems 1
   * @maxItems 100
   */
  waves: [RolloutWave, ...RolloutWave[]];
  bake?: string;
  health?: {
    prometheus?: {
      url: string;
      query: string;
      max: number;
      allow_unknown?: boolean;
      bearer_token_env?: string;
      basic_auth?: {
        username: string;
        password_env: string;
      };
    };
    logs?: {
      max_error_ratio?: number;
      min_entries?: number;
      allow_unknown?: boolean;
    };
  };
  failure_budget?: number;
  on_failure?: "rollback" | "halt";
}
export interface RolloutWave {
  name: string;
  /**
   * @minItems 1
   */
  projects?: [string, ...string[]];
  percent?: number;
}
export interface ManifestTemplate {
  plugin_configs?: ManifestTemplateFamily;
  pipeline_frontend_apps_configs?: ManifestTemplateFamily;
}
export interface ManifestTemplateFamily {
  prune?: boolean;
  drift?: "warn" | "heal";
  configs: ManifestTemplateConfig[];
  protect?: ManifestProtectNames;
  fields?: ManifestFieldsMode;
}
export interface ManifestTemplateConfig {
  name: string;
  plugin: number;
  enabled?: boolean;
  description?: string | null;
  match_action?: number | null;
  order?: number;
  deleted?: boolean;
  protect?: boolean;
  ignore_fields?: ManifestIgnoreFields;
}
export interface ManifestProjectSet {
  name?: string;
  projects: string | (string | number)[];
  except?: (string | number)[];
  use?: ManifestTemplateNames;
  plugin_configs?: ManifestFamily;
  pipeline_frontend_apps_configs?: ManifestFamily;
}
export interface ManifestFamily {
  prune?: boolean;
  drift?: "warn" | "heal";
  configs?: ManifestConfig[];
  overrides?: {
    [k: string]: ManifestConfigOverride | undefined;
  };
  omit?: string[];
  protect?: ManifestProtectNames;
  fields?: ManifestFieldsMode;
}
export interface ManifestConfig {
  name: string;
  plugin: number;
  enabled?: boolean;
  description?: string | null;
  match_action?: number | null;
  order?: number;
  id?: number;
  deleted?: boolean;
  protect?: boolean;
  ignore_fields?: ManifestIgnoreFields;
}
export interface ManifestConfigOverride {
  plugin?: number;
  enabled?: boolean;
  description?: string | null;
  match_action?: number | null;
  order?: number;
  id?: number;
  deleted?: boolean;
  protect?: boolean;
  ignore_fields?: ManifestIgnoreFields;
}
export interface ManifestProject {
  use?: ManifestTemplateNames;
  plugin_configs?: ManifestFamily;
  pipeline_frontend_apps_configs?: ManifestFamily;
}
