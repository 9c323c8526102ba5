// The desired state: what the manifest files say, merged, interpolated, validated and with every
// project resolved. The planner consumes it; the loader produces a LoadedManifest on the way.

import type { FamilyName } from "../families.js";
import type { ManifestConfig, ManifestFamily, ManifestFieldsMode } from "./manifest-schema-types.js";

export interface SourceLocation {
  file: string;
  line: number;
  col: number;
}

/** The record fields a config may ask pcsync never to compare or write once the record exists. */
export type IgnorableField = NonNullable<ManifestConfig["ignore_fields"]>[number];

/** `fields:` of a family: whether fields a config leaves out are managed (at the service's defaults). */
export type FieldsMode = ManifestFieldsMode;

/**
 * Fields the manifest manages on one config, typed as the schema types a config (its `id` is the
 * config's, not a field); a field left out of the manifest is absent here. `order` is resolved:
 * the explicit `order`, or the 1-based position among the configs not deleted. `deleted: true`
 * deletes the record the config matches; the safety settings (`protect: true`: never deleted
 * without --allow-destroy; `ignore_fields`: never compared or written once the record exists) ride
 * along, so that templates, sets and overrides carry them.
 */
export type DesiredFields = Omit<ManifestConfig, "id" | "order"> & { order: number };

/** A `protect:` entry of a family: a record name or `*` glob, and where it was written. */
export interface ProtectPattern {
  pattern: string;
  source: SourceLocation;
}

export interface DesiredConfig {
  /** Pinned record id (`id:` in the manifest), if any. */
  id?: number;
  fields: DesiredFields;
  /** Where the config starts in the manifest (its `- name:` item; for a templated config, in the template). */
  source: SourceLocation;
  /** For a config from a template or a project set: where it was applied to this project (the `use:` entry, or the set). */
  appliedAt?: SourceLocation;
  /** Where each field set in the manifest is (for messages pointing at a value). */
  fieldSources: Partial<Record<keyof DesiredFields | "id", SourceLocation>>;
}

/** `warn`: drift is reported; `heal`: `pcsync watch` also applies the plan of the family. */
export type DriftMode = NonNullable<ManifestFamily["drift"]>;

export interface DesiredFamily {
  project: string;
  family: FamilyName;
  /** Delete remote records of this family that no config claims. */
  prune: boolean;
  /** What `pcsync watch` does when this family drifts (`drift:`); absent: its `--mode`. */
  drift?: DriftMode;
  /** Names and globs of records never deleted without --allow-destroy (`protect:` of the family). */
  protect?: ProtectPattern[];
  /** `fields: all`: fields a config leaves out are managed at the service's defaults. Absent: listed. */
  fields?: FieldsMode;
  /** Whether the orders came from explicit `order:` values (else list positions). */
  explicitOrder: boolean;
  configs: DesiredConfig[];
  /** Where the family block is in the manifest. */
  source: SourceLocation;
  /** Where the manifest names the project (its key, or its entry in a set's list), for errors about it. */
  projectSource?: SourceLocation;
}

export interface DesiredState {
  /** `server.base_url` of the manifest, if set (the first file that sets it wins; conflicts are errors). */
  baseUrl?: string;
  /** Where that `server.base_url` is, for messages about the URL. */
  baseUrlSource?: SourceLocation;
  /**
   * `owner:` of the manifest (every file that sets it sets the same): the records it writes carry
   * this owner's mark, and prune deletes only records with it (owner-mark.ts).
   */
  owner?: { name: string; source: SourceLocation };
  /** `rollout:` of the manifest (one file at most sets it): how `apply` reaches its projects. */
  rollout?: RolloutSpec;
  /** Sorted by project, then by family in FAMILIES order: deterministic whatever the file order. */
  families: DesiredFamily[];
}

/** One wave of `rollout:`: named projects, or the cumulative share of the plan's projects. */
export interface RolloutWaveSpec {
  name: string;
  /** Manifest project keys, in the order written. */
  projects?: string[];
  /** 0 < percent <= 100: by the end of this wave, this share of the plan's projects (rounded up). */
  percent?: number;
  source: SourceLocation;
}

/** `rollout:` as validated, with every default filled in. */
export interface RolloutSpec {
  waves: RolloutWaveSpec[];
  bakeMs: number;
  /** The signals a wave is judged on: the logs (also when `health:` names none), Prometheus. */
  health: RolloutHealthSpec;
  failureBudget: number;
  onFailure: "rollback" | "halt";
  source: SourceLocation;
}

/** `rollout.health`: each signal given is judged, and a project passes only if it passes each. */
export interface RolloutHealthSpec {
  logs?: LogHealthSpec;
  prometheus?: PrometheusHealthSpec;
}

/**
 * `rollout.health.prometheus`: a PromQL query run once per project (its `{{project}}` filled in),
 * whose one value fails the project when it exceeds `max`.
 */
export interface PrometheusHealthSpec {
  /** Prometheus's base URL, without credentials: `/api/v1/query` is asked under it. */
  url: string;
  query: string;
  max: number;
  allowUnknown: boolean;
  /** Where the credentials Prometheus asks for are read from: environment variables, by name. */
  auth?: PrometheusAuth;
}

/** A bearer token, or a user and password, each read from the environment when the rollout runs. */
export type PrometheusAuth =
  | { kind: "bearer"; tokenEnv: string }
  | { kind: "basic"; username: string; passwordEnv: string };

/** `rollout.health.logs`: the ERROR share of the entries logged since a wave's writes. */
export interface LogHealthSpec {
  maxErrorRatio: number;
  minEntries: number;
  allowUnknown: boolean;
}
