// Checks the schema cannot express: project ids, unique names, all-or-none `order`, text the
// service would trim. Reads the plain manifest defensively, so these run even when the schema found
// errors, and all problems of a file come out in one run. Also collects what the cross-file checks
// of merge.ts need.

import { isFamilyName } from "../families.js";
import { describeLookAlike, lookAlikeKey } from "../record-name.js";
import { describeUntrimmed } from "../trim-as-service.js";
import type { Position, YamlProblem } from "./diagnostics.js";
import { asRecord, type LocationIndex, type PlainManifest } from "./plain-manifest.js";
import { type RolloutFact, readRollout } from "./rollout-checks.js";

/** A family block of one file, for the "same project + family in two files" check. */
export interface FamilyBlockFact {
  project: string;
  family: string;
  position: Position;
}

/** A pinned record id, for the "one id claimed twice" check across all files. */
export interface IdClaimFact {
  id: number;
  project: string;
  family: string;
  name: string | undefined;
  position: Position;
}

export interface ManifestFacts {
  baseUrl?: { value: string; position: Position };
  /** The top-level `owner:`, when the file sets one. */
  owner?: { value: string; position: Position };
  /** The top-level `rollout:`, when the file sets one. */
  rollout?: RolloutFact;
  familyBlocks: FamilyBlockFact[];
  idClaims: IdClaimFact[];
}

export interface SemanticResult {
  errors: YamlProblem[];
  warnings: YamlProblem[];
  facts: ManifestFacts;
}

const PROJECT_ID = /^(?:[1-9][0-9]*|0|@current)$/;

/** Where a family's configs are, and how messages name the family. */
interface FamilyPlace {
  project: string;
  family: string;
  label: string;
}

export function checkManifestSemantics(plain: PlainManifest, file: string): SemanticResult {
  const checks = new SemanticChecks(plain.locations);
  const { errors, warnings, facts } = checks;
  const root = asRecord(plain.value);
  if (root === undefined) return { errors, warnings, facts };

  const server = asRecord(root.server);
  if (server !== undefined && typeof server.base_url === "string") {
    facts.baseUrl = { value: server.base_url, position: checks.valueAt(["server", "base_url"]) };
  }
  if (typeof root.owner === "string")
    facts.owner = { value: root.owner, position: checks.valueAt(["owner"]) };
  const rollout = readRollout(root.rollout, file, plain.locations, errors, warnings);
  if (rollout !== undefined) facts.rollout = rollout;

  checks.serviceText(root, []);
  checks.templates(asRecord(root.templates));
  if (Array.isArray(root.project_sets)) checks.projectSets(root.project_sets);
  for (const [project, projectValue] of Object.entries(asRecord(root.projects) ?? {})) {
    const projectProblem = checkProjectId(project);
    if (projectProblem !== undefined)
      errors.push({ position: checks.keyAt(["projects", project]), message: projectProblem });
    for (const [family, familyValue] of Object.entries(asRecord(projectValue) ?? {})) {
      // Unknown families are the schema's to report (with a suggestion).
      if (!isFamilyName(family)) continue;
      const familyPath = ["projects", project, family];
      facts.familyBlocks.push({ project, family, position: checks.keyAt(familyPath) });
      const where = { project, family, label: `${family} of project "${project}"` };
      checks.overrideIds(asRecord(asRecord(familyValue)?.overrides), familyPath, where, facts.idClaims);
      const configs = asRecord(familyValue)?.configs;
      if (Array.isArray(configs))
        checks.familyConfigs(configs, [...familyPath, "configs"], where, facts.idClaims);
    }
  }
  return { errors, warnings, facts };
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

/** The checks of one file, with the problems and facts they find. */
class SemanticChecks {
  readonly errors: YamlProblem[] = [];
  readonly warnings: YamlProblem[] = [];
  readonly facts: ManifestFacts = { familyBlocks: [], idClaims: [] };

  constructor(private readonly locations: LocationIndex) {}

  keyAt(path: readonly (string | number)[]): Position {
    const location = this.locations.lookup(path);
    return location?.key ?? location?.value ?? { line: 1, col: 1 };
  }

  valueAt(path: readonly (string | number)[]): Position {
    return this.locations.lookup(path)?.value ?? { line: 1, col: 1 };
  }

  /**
   * Refuses a config `name` or `description` (in configs, templates, sets, overrides) with white
   * space at either end, which the real service trims (trim-as-service.ts). A manifest kept in git
   * should say what the service holds, byte for byte, on every server; so the file is fixed once,
   * at its line, rather than rewritten in silence or warned about on every run.
   */
  serviceText(value: unknown, path: (string | number)[]): void {
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) this.serviceText(item, [...path, index]);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    for (const [key, item] of Object.entries(value)) {
      if (typeof item !== "string" || (key !== "name" && key !== "description")) {
        this.serviceText(item, [...path, key]);
        continue;
      }
      // A project set's `name` is a label for messages, never sent.
      if (key === "name" && path.length === 2 && path[0] === "project_sets") continue;
      const problem = describeUntrimmed(key, item);
      if (problem !== undefined)
        this.errors.push({ position: this.valueAt([...path, key]), message: problem });
    }
  }

  familyConfigs(
    configs: readonly unknown[],
    configsPath: readonly (string | number)[],
    where: FamilyPlace,
    idClaims: IdClaimFact[],
  ): void {
    const names = new Map<string, Position & { name: string }>();
    const orders = new Map<number, { name: string; position: Position }>();
    let firstWithOrder: { label: string; position: Position } | undefined;
    let firstWithoutOrder: { label: string; position: Position } | undefined;
    const familyLabel = where.label;

    configs.forEach((configValue, index) => {
      const config = asRecord(configValue);
      if (config === undefined) return;
      const path = [...configsPath, index];
      const name = typeof config.name === "string" ? config.name : undefined;
      const label = name === undefined ? `config #${index + 1}` : `"${name}"`;

      if (name !== undefined) {
        const namePosition = this.valueAt([...path, "name"]);
        // Names are compared as the planner matches records (record-name.ts): look-alikes are one name.
        const key = lookAlikeKey(name);
        const first = names.get(key);
        if (first === undefined) names.set(key, { ...namePosition, name });
        else {
          const spelled =
            first.name === name
              ? ""
              : `, as ${JSON.stringify(first.name)}: the same name but for ${describeLookAlike(first.name, name)}`;
          this.errors.push({
            position: namePosition,
            message: `duplicate name "${name}" in ${familyLabel} (first at line ${first.line}, column ${first.col}${spelled}); a name identifies one config, rename one of them`,
          });
        }
      }

      if ("order" in config) {
        const position = this.valueAt([...path, "order"]);
        firstWithOrder ??= { label, position };
        if (typeof config.order === "number" && Number.isInteger(config.order)) {
          const other = orders.get(config.order);
          if (other === undefined) orders.set(config.order, { name: label, position });
          else {
            this.warnings.push({
              position,
              message: `order ${config.order} is also given to ${other.name} (line ${other.position.line}); the service breaks the tie by plugin id, give distinct orders`,
            });
          }
        }
      } else {
        firstWithoutOrder ??= { label, position: this.valueAt(path) };
      }

      if (typeof config.id === "number" && Number.isSafeInteger(config.id) && config.id >= 1) {
        idClaims.push({
          id: config.id,
          project: where.project,
          family: where.family,
          name,
          position: this.valueAt([...path, "id"]),
        });
      }
    });

    if (firstWithOrder !== undefined && firstWithoutOrder !== undefined) {
      this.errors.push({
        position: firstWithoutOrder.position,
        message: `${firstWithoutOrder.label} has no order, but ${firstWithOrder.label} has one (line ${firstWithOrder.position.line}); in ${familyLabel} give every config an order, or none (then list position is the order)`,
      });
    }
  }

  templates(templates: Record<string, unknown> | undefined): void {
    for (const [name, template] of Object.entries(templates ?? {})) {
      const path = ["templates", name];
      if (name.trim() === "") {
        this.errors.push({
          position: this.keyAt(path),
          message: "template name is empty; name it, e.g. `baseline:`",
        });
      }
      for (const [family, familyValue] of Object.entries(asRecord(template) ?? {})) {
        const configs = asRecord(familyValue)?.configs;
        if (!isFamilyName(family) || !Array.isArray(configs)) continue;
        // Ids are refused in templates by the schema: no claims to collect.
        const where = { project: "", family, label: `${family} of template "${name}"` };
        this.familyConfigs(configs, [...path, family, "configs"], where, []);
      }
    }
  }

  projectSets(sets: readonly unknown[]): void {
    sets.forEach((setValue, index) => {
      const set = asRecord(setValue);
      if (set === undefined) return;
      const path = ["project_sets", index];
      const label = typeof set.name === "string" ? `project set "${set.name}"` : `project_sets[${index}]`;
      if (typeof set.projects === "string" && set.projects !== "all") {
        this.errors.push({
          position: this.valueAt([...path, "projects"]),
          message: `projects of ${label} must be a list of project ids (["1", "4"]) or \`all\`, got ${JSON.stringify(set.projects)}`,
        });
      }
      for (const key of ["projects", "except"] as const) {
        const ids = set[key];
        if (!Array.isArray(ids)) continue;
        ids.forEach((id, idIndex) => {
          const problem =
            typeof id === "string" || typeof id === "number" ? checkProjectId(String(id)) : undefined;
          if (problem !== undefined)
            this.errors.push({ position: this.valueAt([...path, key, idIndex]), message: problem });
        });
      }
      for (const [family, familyValue] of Object.entries(set)) {
        if (!isFamilyName(family)) continue;
        const familyPath = [...path, family];
        // A pinned id is one project's record: a set would pin it in each of its projects.
        const ids: IdClaimFact[] = [];
        const where = { project: "", family, label: `${family} of ${label}` };
        this.overrideIds(asRecord(asRecord(familyValue)?.overrides), familyPath, where, ids);
        const configs = asRecord(familyValue)?.configs;
        if (Array.isArray(configs)) this.familyConfigs(configs, [...familyPath, "configs"], where, ids);
        for (const claim of ids) {
          this.errors.push({
            position: claim.position,
            message: `id: in ${label} would pin record ${claim.id} in every project of the set; pin it in one project's own block`,
          });
        }
      }
    });
  }

  overrideIds(
    overrides: Record<string, unknown> | undefined,
    familyPath: readonly (string | number)[],
    where: FamilyPlace,
    idClaims: IdClaimFact[],
  ): void {
    for (const [name, override] of Object.entries(overrides ?? {})) {
      const id = asRecord(override)?.id;
      if (typeof id === "number" && Number.isSafeInteger(id) && id >= 1) {
        idClaims.push({
          id,
          project: where.project,
          family: where.family,
          name,
          position: this.valueAt([...familyPath, "overrides", name, "id"]),
        });
      }
    }
  }
}
