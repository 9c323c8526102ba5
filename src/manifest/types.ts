// The desired state: what the manifest files say, merged, interpolated, validated and with every
// project resolved. The planner consumes it; the loader produces a LoadedManifest on the way.

import type { FamilyName } from "../families.js";

export interface SourceLocation {
  file: string;
  line: number;
  col: number;
}

/** Fields the manifest manages on one config; a field left out of the manifest is absent here. */
export interface DesiredFields {
  plugin: number;
  name: string;
  /** Resolved order: the explicit `order`, or the 1-based list position. */
  order: number;
  enabled?: boolean;
  description?: string | null;
  match_action?: number | null;
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

export interface DesiredFamily {
  project: string;
  family: FamilyName;
  /** Delete remote records of this family that no config claims. */
  prune: boolean;
  /** Whether the orders came from explicit `order:` values (else list positions). */
  explicitOrder: boolean;
  configs: DesiredConfig[];
  /** Where the family block is in the manifest. */
  source: SourceLocation;
}

export interface DesiredState {
  /** `server.base_url` of the manifest, if set (the first file that sets it wins; conflicts are errors). */
  baseUrl?: string;
  /**
   * `owner:` of the manifest (every file that sets it sets the same): the records it writes carry
   * this owner's mark, and prune deletes only records with it (owner-mark.ts).
   */
  owner?: { name: string; source: SourceLocation };
  /** Sorted by project, then by family in FAMILIES order: deterministic whatever the file order. */
  families: DesiredFamily[];
}
