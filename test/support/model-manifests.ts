// The model-based test's manifests and remote states: manifests drawn from every manifest feature
// at once (owners, protect, ignore_fields, `fields: all`, `deleted: true`, templates, project sets,
// names with dashes), remote states that hold look-alike names (white space at the ends, NFD against
// NFC) and, on the seed profile, null names; and the test's own reference for what a name means
// (the identity rule) and what a glob matches, against which pcsync's behaviour is judged.

import { stringify } from "yaml";
import type { EmulatorData, ProfileName, StoredRecord } from "../../src/emulator/index.js";
import type { FamilyName } from "../../src/families.js";
import { writeMark } from "../../src/owner-mark.js";
import { dataWith } from "./emulator-data.js";
import { FE, PC } from "./families.js";
import { fc } from "./fast-check.js";

/** The projects the manifests manage (the example data has 1, 2 and 3; 3 is never managed). */
export const PROJECTS = ["1", "2"] as const;
export type ProjectId = (typeof PROJECTS)[number];

/** The owners: the first manifests' (or none), and the second owner's. */
export const OWNER_A = "team-a";
export const OWNER_B = "team-b";

/**
 * The names of each family, each with the one plugin it always runs (so that no step depends on a
 * plugin change, which posthog-2024 ignores on update). Dashes, accents, and the example data's own
 * names (GeoIP, Property Filter, Legacy S3, Notification Bar), which are live from the start; one
 * name in both families ("app-banner", of two plugins), so that no rule takes a record of one
 * family for another's of the same name; and two names of one plugin (cfg-001, cfg-003), which
 * posthog-2024's rearrange, keyed by plugin id, cannot tell apart.
 */
export const NAME_PLUGINS: Record<FamilyName, Record<string, number>> = {
  plugin_configs: {
    GeoIP: 1,
    "Property Filter": 2,
    "Legacy S3": 5,
    "cfg-001": 3,
    "cfg-002": 4,
    "bot-filter": 8,
    café: 6,
    Billing: 7,
    "app-banner": 9,
    "cfg-003": 3,
    // The mislaid frontend config's name and plugin, rightly under plugin_configs: a record of it
    // there is never the mislaid create's (a take-back or rollback must leave it alone).
    mislaid: 3,
  },
  pipeline_frontend_apps_configs: {
    "Notification Bar": 40,
    "app-banner": 41,
    Señal: 42,
    "early-access": 43,
    // A config of a plugin that is no frontend app, asked of the frontend apps: posthog-2024 makes
    // it under plugin_configs, so every run that creates it must fail the create and take it back.
    // Never a remote record (the real service holds none such).
    mislaid: 3,
  },
};

/** The frontend family's name whose plugin is no frontend app (see NAME_PLUGINS). */
export const MISLAID = "mislaid";

export const FAMILIES: readonly FamilyName[] = [PC, FE];

export function namesOf(family: FamilyName): string[] {
  return Object.keys(NAME_PLUGINS[family]);
}

/** Globs of `protect:`, `--target`, `--exclude` and `--allow-destroy`: `*`, dashes, accents, exact names. */
export const GLOBS = [
  "*",
  "cfg-*",
  "cfg-00*",
  "bot-filter",
  "café",
  "Billing",
  "*-*",
  "Legacy*",
  "*Bar",
  "app-*",
  "Señal",
  "GeoIP",
] as const;

// ---------------------------------------------------------------------------------------------
// The reference: what a name means, and what a glob matches.

const WHITE_SPACE =
  "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const ENDS = new RegExp(`^[${WHITE_SPACE}]+|[${WHITE_SPACE}]+$`, "g");

/** The identity rule: a name trimmed at both ends (as the service trims) and in NFC. */
export function identity(name: string): string {
  return name.replace(ENDS, "").normalize("NFC");
}

/**
 * Whether a glob matches a record's name as the contract says: `*` is the only special character,
 * `*` alone matches every record (a null name too), and a glob matches every look-alike of the name
 * it spells.
 */
export function globMatches(glob: string, name: string | null): boolean {
  if (glob === "*") return true;
  const parts = identity(glob).split("*");
  const subject = identity(name ?? "");
  if (parts.length === 1) return subject === parts[0];
  const first = parts[0] ?? "";
  const last = parts.at(-1) ?? "";
  if (!subject.startsWith(first) || subject.length < first.length + last.length) return false;
  let at = first.length;
  for (const middle of parts.slice(1, -1)) {
    const found = subject.indexOf(middle, at);
    if (found < 0) return false;
    at = found + middle.length;
  }
  return subject.endsWith(last) && subject.length - last.length >= at;
}

export function anyGlobMatches(globs: readonly string[], name: string | null): boolean {
  return globs.some((glob) => globMatches(glob, name));
}

// ---------------------------------------------------------------------------------------------
// Manifests.

export type IgnorableField = "enabled" | "description" | "order" | "match_action";

export interface ConfigModel {
  name: string;
  enabled?: boolean;
  description?: string | null;
  deleted?: true;
  protect?: true;
  ignore_fields?: IgnorableField[];
}

export interface FamilyModel {
  prune: boolean;
  fieldsAll: boolean;
  protect: string[];
  explicitOrder: boolean;
  configs: ConfigModel[];
}

export interface ManifestModel {
  owner: string | null;
  /** A template of plugin_configs, used by project 1, or by the set when there is one. */
  template: { configs: ConfigModel[]; protect: string[] } | null;
  /** A project set of projects 1 and 2: the template's use, and a frontend-apps block. */
  set: { useTemplate: boolean; frontend: FamilyModel | null } | null;
  projects: Partial<Record<ProjectId, Partial<Record<FamilyName, FamilyModel>>>>;
}

const TEMPLATE = "shared-tpl";

const descriptionArb = fc.constantFrom<string | null>(
  null,
  "Adds country to events",
  "managed - do not edit",
  "Drops $ip",
);

function configArb(name: string): fc.Arbitrary<ConfigModel> {
  return fc
    .record(
      {
        enabled: fc.boolean(),
        description: descriptionArb,
        deleted: fc.constant<true>(true),
        protect: fc.constant<true>(true),
        ignore_fields: fc.subarray<IgnorableField>(["enabled", "description", "order"], { minLength: 1 }),
        nfd: fc.boolean(),
      },
      { requiredKeys: [] },
    )
    .map(({ nfd, ...fields }) => {
      const config: ConfigModel = { name: nfd ? name.normalize("NFD") : name };
      if (fields.enabled !== undefined) config.enabled = fields.enabled;
      if (fields.description !== undefined) config.description = fields.description;
      // A deleted config is drawn rarely (a quarter of the configs that would draw it).
      if (fields.deleted && fields.protect) config.deleted = true;
      if (fields.protect && !fields.deleted) config.protect = true;
      if (fields.ignore_fields) config.ignore_fields = fields.ignore_fields;
      return config;
    });
}

function configsArb(names: readonly string[], max: number): fc.Arbitrary<ConfigModel[]> {
  return fc
    .shuffledSubarray([...names], { minLength: 0, maxLength: max })
    .chain((picked) => fc.tuple(...picked.map(configArb)))
    .map((configs) => [...configs]);
}

function familyArb(names: readonly string[], explicitOrderAllowed: boolean): fc.Arbitrary<FamilyModel> {
  return fc.record({
    prune: fc.boolean(),
    fieldsAll: fc.constantFrom(false, false, true),
    protect: fc.subarray([...GLOBS], { maxLength: 2 }),
    explicitOrder: explicitOrderAllowed ? fc.boolean() : fc.constant(false),
    configs: configsArb(names, 4),
  });
}

/** A manifest drawn from every feature: one owner (or none), a template, a set, both families. */
export function manifestArb(owner: fc.Arbitrary<string | null>): fc.Arbitrary<ManifestModel> {
  const pcNames = namesOf(PC);
  return fc
    .record({
      owner,
      templateNames: fc.option(fc.shuffledSubarray(pcNames, { minLength: 1, maxLength: 2 }), { nil: null }),
      setKind: fc.constantFrom("none", "template", "frontend", "both"),
      withProject2: fc.boolean(),
    })
    .chain(({ owner: drawnOwner, templateNames, setKind, withProject2 }) => {
      const own = pcNames.filter((name) => !templateNames?.includes(name));
      const setFrontend = setKind === "frontend" || setKind === "both";
      const projectFamily = (project: ProjectId) =>
        fc.record(
          {
            [PC]: familyArb(own, templateNames === null || project === "2"),
            ...(setFrontend ? {} : { [FE]: familyArb(namesOf(FE), true) }),
          },
          { requiredKeys: [PC] },
        );
      return fc.record({
        owner: fc.constant(drawnOwner),
        template:
          templateNames === null
            ? fc.constant(null)
            : fc.record({
                configs: fc.tuple(...templateNames.map(configArb)).map((configs) => [...configs]),
                protect: fc.subarray([...GLOBS], { maxLength: 1 }),
              }),
        set:
          setKind === "none"
            ? fc.constant(null)
            : fc.record({
                useTemplate: fc.constant(setKind !== "frontend" && templateNames !== null),
                frontend: setFrontend ? familyArb(namesOf(FE), false) : fc.constant(null),
              }),
        projects: fc.record(
          { "1": projectFamily("1"), "2": projectFamily("2") },
          { requiredKeys: withProject2 ? ["1", "2"] : ["1"] },
        ),
      });
    })
    .map((model) => fixTemplateUse(model as ManifestModel));
}

/** The template's configs go to project 2 only through the set; order is by position there. */
function fixTemplateUse(model: ManifestModel): ManifestModel {
  if (model.template === null) return model;
  const usedBySet = model.set?.useTemplate === true;
  for (const project of PROJECTS) {
    const family = model.projects[project]?.[PC];
    if (family && (project === "1" || usedBySet)) family.explicitOrder = false;
  }
  return model;
}

/** Whether a project gets the template (through the set, or project 1's own `use:`). */
export function usesTemplate(model: ManifestModel, project: ProjectId): boolean {
  if (model.template === null) return false;
  if (model.set?.useTemplate) return true;
  return project === "1" && model.projects["1"] !== undefined;
}

function renderConfig(config: ConfigModel, family: FamilyName, order: number | undefined): object {
  const plugin = NAME_PLUGINS[family][config.name.normalize("NFC")];
  return {
    name: config.name,
    plugin,
    ...(config.enabled === undefined ? {} : { enabled: config.enabled }),
    ...(config.description === undefined ? {} : { description: config.description }),
    ...(order === undefined ? {} : { order }),
    ...(config.deleted ? { deleted: true } : {}),
    ...(config.protect ? { protect: true } : {}),
    ...(config.ignore_fields ? { ignore_fields: config.ignore_fields } : {}),
  };
}

function renderFamily(model: FamilyModel, family: FamilyName, orderFrom = 1): object {
  return {
    ...(model.prune ? { prune: true } : {}),
    ...(model.fieldsAll ? { fields: "all" } : {}),
    ...(model.protect.length > 0 ? { protect: model.protect } : {}),
    configs: model.configs.map((config, index) =>
      renderConfig(config, family, model.explicitOrder ? orderFrom + index * 2 : undefined),
    ),
  };
}

/** The manifest's YAML. */
export function renderManifest(model: ManifestModel): string {
  const document: Record<string, unknown> = { version: 1 };
  if (model.owner !== null) document.owner = model.owner;
  if (model.template !== null) {
    document.templates = {
      [TEMPLATE]: {
        [PC]: {
          ...(model.template.protect.length > 0 ? { protect: model.template.protect } : {}),
          configs: model.template.configs.map((config) => renderConfig(config, PC, undefined)),
        },
      },
    };
  }
  if (model.set !== null) {
    document.project_sets = [
      {
        name: "model-set",
        projects: [...PROJECTS],
        ...(model.set.useTemplate ? { use: [TEMPLATE] } : {}),
        ...(model.set.frontend ? { [FE]: renderFamily(model.set.frontend, FE) } : {}),
      },
    ];
  }
  const projects: Record<string, unknown> = {};
  for (const project of PROJECTS) {
    const families = model.projects[project];
    if (!families) continue;
    const block: Record<string, unknown> = {};
    if (project === "1" && model.template !== null && !model.set?.useTemplate) block.use = [TEMPLATE];
    for (const family of FAMILIES) {
      const familyModel = families[family];
      if (familyModel) block[family] = renderFamily(familyModel, family);
    }
    projects[project] = block;
  }
  document.projects = projects;
  return stringify(document, { lineWidth: 0 });
}

/** What protects records of one project's family: globs, and the names of `protect: true` configs. */
export interface Protection {
  globs: string[];
  names: string[];
}

/** The configs a project's family gets, templated ones first. */
export function configsOf(model: ManifestModel, project: ProjectId, family: FamilyName): ConfigModel[] {
  const configs: ConfigModel[] = [];
  if (family === PC && usesTemplate(model, project)) configs.push(...(model.template?.configs ?? []));
  if (family === FE && model.set?.frontend) configs.push(...model.set.frontend.configs);
  configs.push(...(model.projects[project]?.[family]?.configs ?? []));
  return configs;
}

/** Whether the manifest manages this project's family at all. */
/**
 * Whether the manifest asks a project's frontend apps for the mislaid config that is not there
 * yet and not deleted by it: on posthog-2024 its create fails by design (exit 1), every time.
 */
export function asksMislaid(model: ManifestModel): boolean {
  return PROJECTS.some((project) =>
    configsOf(model, project, FE).some((config) => config.name === MISLAID && config.deleted !== true),
  );
}

export function manages(model: ManifestModel, project: ProjectId, family: FamilyName): boolean {
  if (family === FE && model.set?.frontend) return true;
  if (family === PC && usesTemplate(model, project)) return true;
  return model.projects[project]?.[family] !== undefined;
}

export function protectionOf(model: ManifestModel, project: ProjectId, family: FamilyName): Protection {
  if (!manages(model, project, family)) return { globs: [], names: [] };
  const globs: string[] = [];
  if (family === PC && usesTemplate(model, project)) globs.push(...(model.template?.protect ?? []));
  if (family === FE && model.set?.frontend) globs.push(...model.set.frontend.protect);
  globs.push(...(model.projects[project]?.[family]?.protect ?? []));
  const names = configsOf(model, project, family)
    .filter((config) => config.protect)
    .map((config) => config.name);
  return { globs, names };
}

// ---------------------------------------------------------------------------------------------
// Remote states.

export type Variant = "as-is" | "trailing-space" | "leading-space" | "nfd";

export interface RemoteRecordModel {
  project: ProjectId;
  family: FamilyName;
  /** A pool name in a variant, or null (a record with no name: the seed profile only). */
  name: string | null;
  variant: Variant;
  enabled: boolean;
  mark: string | null;
}

/** How a look-alike of `name` is spelled. */
export function spell(name: string, variant: Variant): string {
  switch (variant) {
    case "as-is":
      return name;
    case "trailing-space":
      return `${name} `;
    case "leading-space":
      return ` ${name}`;
    case "nfd":
      return name.normalize("NFD");
  }
}

/**
 * The records added to the example data: pool names (at most one per identity in a family, the
 * example data's names excluded), in look-alike spellings, some marked by one owner or the other;
 * on seed, records with no name. posthog-2024 trims names, so there its look-alikes are NFD only.
 */
export function remoteArb(profile: ProfileName): fc.Arbitrary<RemoteRecordModel[]> {
  const variants: Variant[] =
    profile === "seed" ? ["as-is", "trailing-space", "leading-space", "nfd"] : ["as-is", "nfd"];
  const taken = new Set(["GeoIP", "Property Filter", "Legacy S3", "Notification Bar"]);
  const named = PROJECTS.flatMap((project) =>
    FAMILIES.flatMap((family) =>
      namesOf(family)
        .filter((name) => project === "2" || !taken.has(name))
        .filter((name) => !(project === "2" && name === "GeoIP") && !(family === FE && name === MISLAID))
        .map((name) => ({ project, family, name })),
    ),
  );
  const recordArb = (slot: { project: ProjectId; family: FamilyName; name: string | null }) =>
    fc.record({
      project: fc.constant(slot.project),
      family: fc.constant(slot.family),
      name: fc.constant(slot.name),
      variant: slot.name === null ? fc.constant<Variant>("as-is") : fc.constantFrom(...variants),
      enabled: fc.boolean(),
      mark: fc.constantFrom<string | null>(null, null, OWNER_A, OWNER_B),
    });
  const nullSlots =
    profile === "seed"
      ? PROJECTS.flatMap((project) => FAMILIES.map((family) => ({ project, family, name: null })))
      : [];
  return fc
    .tuple(
      fc.shuffledSubarray(named, { maxLength: 8 }),
      fc.subarray(nullSlots, { maxLength: Math.min(2, nullSlots.length) }),
    )
    .chain(([slots, nulls]) => fc.tuple(...[...slots, ...nulls].map(recordArb)))
    .map((records) => [...records]);
}

/** The plugin a record with no name runs: the family's first pool plugin. */
function pluginFor(record: RemoteRecordModel): number {
  const plugins = NAME_PLUGINS[record.family];
  if (record.name !== null) return plugins[record.name] as number;
  return Object.values(plugins)[1] as number;
}

/** The emulator's data: the example data and the drawn records, with orders after the example's. */
export function remoteData(records: readonly RemoteRecordModel[]): EmulatorData {
  return dataWith(
    records.map((record, index) => ({
      project: Number(record.project),
      family: record.family,
      plugin: pluginFor(record),
      order: 10 + index,
      name: record.name === null ? null : spell(record.name, record.variant),
      enabled: record.enabled,
      description: record.mark === null ? null : writeMark("seeded", record.mark),
    })),
  );
}

export type { StoredRecord };
