// The desired state: what the manifest files say, merged, interpolated, validated and with every
// project resolved. The planner consumes it; the loader produces a LoadedManifest on the way.

import type { FamilyName } from "../families.js";
import type { ManifestConfig, ManifestFamily, ManifestFieldsMode } from "./manifest-schema-types.js";

export interface SourceLocation {
  file: string;
  line: number;
  col: number;
}

export type IgnorableField = NonNullable<ManifestConfig["ignore_fields"]>[number];

export type FieldsMode = ManifestFieldsMode;

/**
 * The fields the manifest manages on one config (one left out is absent). `order` is resolved: the
 * explicit one, or the 1-based position among the configs not deleted. The safety settings ride
 * along, so that templates, sets and overrides carry them.
 */
export type DesiredFields = Omit<ManifestConfig, "id" | "order"> & { order: number };

/** A record name or `*` glob. */
export interface ProtectPattern {
  pattern: string;
  source: SourceLocation;
}

export interface DesiredConfig {
  id?: number;
  fields: DesiredFields;
  /** Its `- name:` item (for a templated config, in the template). */
  source: SourceLocation;
  /** For a config from a template or a project set: the `use:` entry, or the set. */
  appliedAt?: SourceLocation;
  fieldSources: Partial<Record<keyof DesiredFields | "id", SourceLocation>>;
}

/** `heal`: `pcsync watch` also applies the plan of the family. */
export type DriftMode = NonNullable<ManifestFamily["drift"]>;

export interface DesiredFamily {
  project: string;
  family: FamilyName;
  prune: boolean;
  /** Absent: `pcsync watch --mode` decides. */
  drift?: DriftMode;
  protect?: ProtectPattern[];
  /** `all`: fields a config leaves out are managed at the service's defaults. Absent: listed. */
  fields?: FieldsMode;
  /** Whether the orders came from explicit `order:` values (else list positions). */
  explicitOrder: boolean;
  configs: DesiredConfig[];
  source: SourceLocation;
  /** Where the manifest names the project (its key, or its entry in a set's list). */
  projectSource?: SourceLocation;
}

export interface DesiredState {
  /** `server.base_url` (files that set it must agree). */
  baseUrl?: string;
  baseUrlSource?: SourceLocation;
  /** Records written carry this owner's mark, and prune deletes only records with it (owner-mark.ts). */
  owner?: { name: string; source: SourceLocation };
  rollout?: RolloutSpec;
  /** Sorted by project, then by family in FAMILIES order: deterministic whatever the file order. */
  families: DesiredFamily[];
}

/** Named projects, or the cumulative share of the plan's projects. */
export interface RolloutWaveSpec {
  name: string;
  projects?: string[];
  /** 0 < percent <= 100: by the end of this wave, this share of the plan's projects (rounded up). */
  percent?: number;
  source: SourceLocation;
}

/** `rollout:` with every default filled in. */
export interface RolloutSpec {
  waves: RolloutWaveSpec[];
  bakeMs: number;
  /** The logs are judged also when `health:` names no signal. */
  health: RolloutHealthSpec;
  failureBudget: number;
  onFailure: "rollback" | "halt";
  source: SourceLocation;
}

/** A project passes only if it passes each signal given. */
export interface RolloutHealthSpec {
  logs?: LogHealthSpec;
  prometheus?: PrometheusHealthSpec;
}

/** A PromQL query run once per project (`{{project}}` filled in); a value over `max` fails it. */
export interface PrometheusHealthSpec {
  /** Without credentials: `/api/v1/query` is asked under it. */
  url: string;
  query: string;
  max: number;
  allowUnknown: boolean;
  auth?: PrometheusAuth;
}

/** Secrets are named environment variables, read when the rollout runs. */
export type PrometheusAuth =
  | { kind: "bearer"; tokenEnv: string }
  | { kind: "basic"; username: string; passwordEnv: string };

/** The ERROR share of the entries logged since a wave's writes. */
export interface LogHealthSpec {
  maxErrorRatio: number;
  minEntries: number;
  allowUnknown: boolean;
}
