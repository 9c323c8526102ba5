// Reads one manifest file into blocks with positions (expand-types.ts), checking in the same walk what
// the schema cannot (project ids, unique names, all-or-none `order`, text the service would trim).

import { FAMILY_NAMES } from "../families.js";
import { asRecord } from "../plain-object.js";
import { describeLookAlike, lookAlikeKey } from "../record-name.js";
import { describeUntrimmed } from "../trim-as-service.js";
import type { YamlProblem } from "./diagnostics.js";
import type {
  ConfigItem,
  FamilyBlock,
  ManifestBlocks,
  NamedPlace,
  OverrideItem,
  ProjectSetBlock,
} from "./expand-types.js";
import type { PlainManifest } from "./plain-manifest.js";
import { type RolloutFact, readRollout } from "./rollout-checks.js";
import type { SourceLocation } from "./types.js";

interface Placed<T> {
  value: T;
  source: SourceLocation;
}

/** For the "one id claimed twice" check across files. */
export interface IdClaim {
  id: number;
  project: string;
  family: string;
  name: string | undefined;
  source: SourceLocation;
}

/** The blocks are read also when the file has errors, for the checks across files. */
export interface ManifestFileBlocks {
  file: string;
  blocks: ManifestBlocks;
  baseUrl?: Placed<string>;
  owner?: Placed<string>;
  rollout?: RolloutFact;
  idClaims: IdClaim[];
}

// The safety keys ride along with the fields, so that templates, sets and overrides carry them.
const SETTINGS = ["deleted", "protect", "ignore_fields"] as const;
const COPIED_FIELDS = ["plugin", "order", "enabled", "description", "match_action", ...SETTINGS] as const;
const OVERRIDE_FIELDS = [...COPIED_FIELDS, "id"] as const;
const CONFIG_FIELDS = ["name", ...OVERRIDE_FIELDS] as const;
const PROJECT_ID = /^(?:[1-9][0-9]*|0|@current)$/;

type Path = readonly (string | number)[];

interface FamilyPlace {
  project: string;
  family: string;
  label: string;
  claims: IdClaim[];
}

/** Defensive: the checks run even when the schema found errors, so a file's problems come out at once. */
export function readManifestBlocks(
  file: string,
  plain: PlainManifest,
): { read: ManifestFileBlocks; errors: YamlProblem[]; warnings: YamlProblem[] } {
  const reader = new BlockReader(file, plain);
  const { errors, warnings } = reader;
  const read: ManifestFileBlocks = { file, blocks: { templates: [], sets: [], projects: [] }, idClaims: [] };
  const root = asRecord(plain.value);
  if (root === undefined) return { read, errors, warnings };

  const baseUrl = asRecord(root.server)?.base_url;
  if (typeof baseUrl === "string")
    read.baseUrl = { value: baseUrl, source: reader.at(["server", "base_url"]) };
  if (typeof root.owner === "string") read.owner = { value: root.owner, source: reader.at(["owner"]) };
  const rollout = readRollout(root.rollout, file, plain.locations, errors, warnings);
  if (rollout !== undefined) read.rollout = rollout;

  reader.serviceText(root, []);
  for (const [name, template] of Object.entries(asRecord(root.templates) ?? {})) {
    const path = ["templates", name];
    if (name.trim() === "")
      errors.push({
        position: reader.at(path, "key"),
        message: "template name is empty; name it, e.g. `baseline:`",
      });
    read.blocks.templates.push({
      name,
      source: reader.at(path, "key"),
      // Ids are refused in templates by the schema: their claims are dropped.
      families: reader.families(asRecord(template), path, "", `template "${name}"`, []),
    });
  }
  for (const [index, value] of (Array.isArray(root.project_sets) ? root.project_sets : []).entries()) {
    const set = asRecord(value);
    if (set !== undefined) read.blocks.sets.push(reader.projectSet(set, index));
  }
  for (const [project, value] of Object.entries(asRecord(root.projects) ?? {})) {
    const path = ["projects", project];
    const source = reader.at(path, "key");
    const projectProblem = checkProjectId(project);
    if (projectProblem !== undefined) errors.push({ position: source, message: projectProblem });
    const block = asRecord(value) ?? {};
    read.blocks.projects.push({
      project,
      source,
      ...(block.use === undefined ? {} : { useSource: reader.at([...path, "use"], "key") }),
      use: reader.names(block.use, [...path, "use"]),
      families: reader.families(block, path, project, `project "${project}"`, read.idClaims),
    });
  }
  return { read, errors, warnings };
}

function checkProjectId(project: string): string | undefined {
  if (project.trim() === "") return 'project id is empty; write a project id such as "1", or "@current"';
  if (PROJECT_ID.test(project)) return undefined;
  if (/^0[0-9]+$/.test(project)) {
    return `project id "${project}" has leading zeros; write "${project.replace(/^0+/, "")}"`;
  }
  const shown = JSON.stringify(project.length > 60 ? `${project.slice(0, 57)}...` : project);
  return `project id ${shown} must be a decimal project id (such as "1") or "@current"`;
}

class BlockReader {
  readonly errors: YamlProblem[] = [];
  readonly warnings: YamlProblem[] = [];

  constructor(
    private readonly file: string,
    private readonly plain: PlainManifest,
  ) {}

  at(path: Path, which: "key" | "value" = "value"): SourceLocation {
    const location = this.plain.locations.lookup(path);
    const position = (which === "key" ? location?.key : undefined) ?? location?.value ?? { line: 1, col: 1 };
    return { file: this.file, line: position.line, col: position.col };
  }

  names(names: unknown, path: Path): NamedPlace[] {
    if (!Array.isArray(names)) return [];
    return names.map(
      (name, index): NamedPlace => ({ name: String(name), source: this.at([...path, index]) }),
    );
  }

  /**
   * Refuses a `name` or `description` the service would trim: a manifest in git should say what the
   * service holds, byte for byte, so the file is fixed once rather than warned about on every run.
   */
  serviceText(value: unknown, path: (string | number)[]): void {
    if (typeof value !== "object" || value === null) return;
    // A list's entries too: their keys are the indexes, which find a place as numbers do.
    for (const [key, item] of Object.entries(value)) {
      if (typeof item !== "string" || (key !== "name" && key !== "description")) {
        this.serviceText(item, [...path, key]);
        continue;
      }
      // A project set's `name` is a label for messages, never sent.
      if (key === "name" && path.length === 2 && path[0] === "project_sets") continue;
      const problem = describeUntrimmed(key, item);
      if (problem !== undefined) this.errors.push({ position: this.at([...path, key]), message: problem });
    }
  }

  projectSet(set: Record<string, unknown>, index: number): ProjectSetBlock {
    const path = ["project_sets", index];
    const label = typeof set.name === "string" ? `project set "${set.name}"` : `project_sets[${index}]`;
    if (typeof set.projects === "string" && set.projects !== "all") {
      this.errors.push({
        position: this.at([...path, "projects"]),
        message: `projects of ${label} must be a list of project ids (["1", "4"]) or \`all\`, got ${JSON.stringify(set.projects)}`,
      });
    }
    const projects = this.projectIds(set.projects, [...path, "projects"]);
    const except = this.projectIds(set.except, [...path, "except"]);
    const claims: IdClaim[] = [];
    const families = this.families(set, path, "", label, claims);
    // A pinned id is one project's record: a set would pin it in each of its projects.
    for (const claim of claims) {
      this.errors.push({
        position: claim.source,
        message: `id: in ${label} would pin record ${claim.id} in every project of the set; pin it in one project's own block`,
      });
    }
    return {
      label: typeof set.name === "string" ? set.name : `project_sets[${index}]`,
      source: this.at(path),
      projects: typeof set.projects === "string" ? "all" : projects,
      except,
      use: this.names(set.use, [...path, "use"]),
      families,
    };
  }

  /** Other types than ids are the schema's to report. */
  private projectIds(ids: unknown, path: Path): NamedPlace[] {
    const places = this.names(ids, path);
    for (const [index, place] of places.entries()) {
      const id = (ids as unknown[])[index];
      const problem =
        typeof id === "string" || typeof id === "number" ? checkProjectId(place.name) : undefined;
      if (problem !== undefined) this.errors.push({ position: place.source, message: problem });
    }
    return places;
  }

  /** `project`: "" but for a project; the ids the configs and overrides pin go to `claims`. */
  families(
    owner: Record<string, unknown> | undefined,
    ownerPath: Path,
    project: string,
    ownerLabel: string,
    claims: IdClaim[],
  ): FamilyBlock[] {
    const families: FamilyBlock[] = [];
    for (const family of FAMILY_NAMES) {
      if (owner?.[family] === undefined) continue;
      const value = asRecord(owner[family]) ?? {};
      const path = [...ownerPath, family];
      const where: FamilyPlace = { project, family, label: `${family} of ${ownerLabel}`, claims };
      const block: FamilyBlock = {
        family,
        source: this.at(path, "key"),
        valueSource: this.at(path),
        overrides: Object.entries(asRecord(value.overrides) ?? {}).flatMap(([name, override]) => {
          const record = asRecord(override);
          return record === undefined
            ? []
            : [this.override(name, record, [...path, "overrides", name], where)];
        }),
        omit: this.names(value.omit, [...path, "omit"]),
      };
      // Their types are the schema's to check.
      for (const key of ["prune", "drift", "fields"] as const) {
        if (value[key] !== undefined)
          Object.assign(block, { [key]: { value: value[key], source: this.at([...path, key]) } });
      }
      if (Array.isArray(value.protect)) {
        block.protect = value.protect.map((pattern, index) => ({
          pattern: pattern as string,
          source: this.at([...path, "protect", index]),
        }));
      }
      if (Array.isArray(value.configs))
        block.configs = this.configs(value.configs, [...path, "configs"], where);
      families.push(block);
    }
    return families;
  }

  private override(
    name: string,
    override: Record<string, unknown>,
    path: Path,
    where: FamilyPlace,
  ): OverrideItem {
    const fieldSources = this.fieldSources(override, path, OVERRIDE_FIELDS);
    const item: OverrideItem = { name, source: this.at(path, "key"), fields: {}, fieldSources };
    copyFields(override, item.fields);
    if (override.id !== undefined) item.id = override.id as number;
    claim(item, where, name);
    return item;
  }

  private configs(configs: readonly unknown[], configsPath: Path, where: FamilyPlace): ConfigItem[] {
    const items: ConfigItem[] = [];
    const labelOf = (index: number) => {
      const name = asRecord(configs[index])?.name;
      return typeof name === "string" ? `"${name}"` : `config #${index + 1}`;
    };
    const names = new Map<string, { name: string; at: SourceLocation }>();
    const orders = new Map<number, number>();
    let firstWithOrder: number | undefined;
    let firstWithoutOrder: { index: number; item: ConfigItem } | undefined;

    configs.forEach((value, index) => {
      const config = asRecord(value);
      if (config === undefined) return;
      const item = this.config(config, [...configsPath, index]);
      items.push(item);
      const { fieldSources } = item;
      const { name, order } = config;

      if (typeof name === "string" && fieldSources.name !== undefined) {
        // Names are compared as the planner matches records (record-name.ts): look-alikes are one name.
        const key = lookAlikeKey(name);
        const first = names.get(key);
        if (first === undefined) names.set(key, { name, at: fieldSources.name });
        else {
          const spelled =
            first.name === name
              ? ""
              : `, as ${JSON.stringify(first.name)}: the same name but for ${describeLookAlike(first.name, name)}`;
          this.errors.push({
            position: fieldSources.name,
            message: `duplicate name "${name}" in ${where.label} (first at line ${first.at.line}, column ${first.at.col}${spelled}); a name identifies one config, rename one of them`,
          });
        }
      }

      if (fieldSources.order !== undefined) {
        firstWithOrder ??= index;
        if (typeof order === "number" && Number.isInteger(order)) {
          const other = orders.get(order);
          if (other === undefined) orders.set(order, index);
          else {
            this.warnings.push({
              position: fieldSources.order,
              message: `order ${order} is also given to ${labelOf(other)} (line ${this.at([...configsPath, other, "order"]).line}); the service breaks the tie by plugin id, give distinct orders`,
            });
          }
        }
      } else firstWithoutOrder ??= { index, item };
      claim(item, where, name);
    });

    if (firstWithOrder !== undefined && firstWithoutOrder !== undefined) {
      this.errors.push({
        position: firstWithoutOrder.item.source,
        message: `${labelOf(firstWithoutOrder.index)} has no order, but ${labelOf(firstWithOrder)} has one (line ${this.at([...configsPath, firstWithOrder, "order"]).line}); in ${where.label} give every config an order, or none (then list position is the order)`,
      });
    }
    return items;
  }

  /** Its fields have ConfigItem's types once the schema passed (the only time it is expanded). */
  private config(config: Record<string, unknown>, path: Path): ConfigItem {
    const fields = { plugin: config.plugin, name: config.name } as ConfigItem["fields"];
    copyFields(config, fields);
    const item: ConfigItem = {
      fields,
      source: this.at(path),
      fieldSources: this.fieldSources(config, path, CONFIG_FIELDS),
    };
    if (config.id !== undefined) item.id = config.id as number;
    return item;
  }

  private fieldSources<Field extends string>(
    written: Record<string, unknown>,
    path: Path,
    fields: readonly Field[],
  ): Partial<Record<Field, SourceLocation>> {
    const sources: Partial<Record<Field, SourceLocation>> = {};
    for (const field of fields) if (written[field] !== undefined) sources[field] = this.at([...path, field]);
    return sources;
  }
}

function claim(item: ConfigItem | OverrideItem, where: FamilyPlace, name: unknown): void {
  const { id } = item;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 1) return;
  const { project, family } = where;
  const source = item.fieldSources.id ?? item.source;
  where.claims.push({ id, project, family, name: typeof name === "string" ? name : undefined, source });
}

/** Always in this order. */
function copyFields(from: Record<string, unknown>, to: OverrideItem["fields"]): void {
  for (const field of COPIED_FIELDS) {
    const value = from[field];
    if (value !== undefined)
      (to as Record<string, unknown>)[field] = Array.isArray(value) ? [...value] : value;
  }
}
