// The manifest as blocks with positions, between schema validation and expansion: templates,
// project sets and project blocks of every file, before `use:`, `overrides:` and `omit:` are applied.

import type { FamilyName } from "../families.js";
import type {
  DesiredFields,
  DesiredState,
  DriftMode,
  FieldsMode,
  ProtectPattern,
  SourceLocation,
} from "./types.js";

/** As written (in a template, a set or a project): its order may be left out. */
export interface ConfigItem {
  id?: number;
  fields: Omit<DesiredFields, "order"> & { order?: number };
  source: SourceLocation;
  fieldSources: Partial<Record<keyof DesiredFields | "id", SourceLocation>>;
}

type OverrideFields = Partial<Omit<DesiredFields, "name">>;

export interface OverrideItem {
  /** Of the templated config it changes. */
  name: string;
  source: SourceLocation;
  fields: OverrideFields;
  id?: number;
  fieldSources: Partial<Record<keyof OverrideFields | "id", SourceLocation>>;
}

/** A `use:` entry, an `omit:` entry, a project id of a set. */
export interface NamedPlace {
  name: string;
  source: SourceLocation;
}

export interface FamilyBlock {
  family: FamilyName;
  /** The family key. */
  source: SourceLocation;
  /** The family's mapping (where "missing configs" points). */
  valueSource: SourceLocation;
  prune?: { value: boolean; source: SourceLocation };
  drift?: { value: DriftMode; source: SourceLocation };
  protect?: ProtectPattern[];
  fields?: { value: FieldsMode; source: SourceLocation };
  /** Undefined without `configs:` (allowed when a used template provides the family). */
  configs?: ConfigItem[];
  overrides: OverrideItem[];
  omit: NamedPlace[];
}

export interface TemplateBlock {
  name: string;
  source: SourceLocation;
  /** Only `prune`, `drift` and `configs` are ever set on a template's family blocks. */
  families: FamilyBlock[];
}

export interface ProjectBlock {
  project: string;
  source: SourceLocation;
  /** For "use given twice" across files. */
  useSource?: SourceLocation;
  use: NamedPlace[];
  families: FamilyBlock[];
}

export interface ProjectSetBlock {
  /** The set's `name:`, or `project_sets[N]` (0-based, in its file) when it has none. */
  label: string;
  /** The set's list item. */
  source: SourceLocation;
  /** "all": every project the API key can see. */
  projects: NamedPlace[] | "all";
  except: NamedPlace[];
  use: NamedPlace[];
  families: FamilyBlock[];
}

export interface ManifestBlocks {
  templates: TemplateBlock[];
  sets: ProjectSetBlock[];
  projects: ProjectBlock[];
}

/** The manifest as loaded, before the planner may see it (resolveProjectSets makes a DesiredState of it). */
export interface LoadedManifest extends DesiredState {
  /**
   * When a project set says `projects: all`: the blocks, expanded again at plan time once the project
   * listing is read. Until then, `families` holds the projects the manifest names explicitly.
   */
  unresolved?: ManifestBlocks;
}
