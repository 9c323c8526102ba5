// `rollout:` of one manifest file, with every default filled in, and the checks the schema cannot
// express (unique wave names, a project in one wave, shares that never shrink); merge.ts, across files.

import { parseDuration } from "../duration.js";
import { asRecord } from "../plain-object.js";
import type { Position, YamlProblem } from "./diagnostics.js";
import type { LocationIndex } from "./plain-manifest.js";
import { ROLLOUT_DEFAULTS } from "./rollout-defaults.js";
import type {
  PrometheusAuth,
  PrometheusHealthSpec,
  RolloutHealthSpec,
  RolloutSpec,
  RolloutWaveSpec,
  SourceLocation,
} from "./types.js";

/** `projectSources`: where each wave's named projects are written (merge.ts checks them). */
export interface RolloutFact extends RolloutSpec {
  projectSources: SourceLocation[][];
}

/** Defensive: the schema reports wrong types, this reads what it can. */
export function readRollout(
  value: unknown,
  file: string,
  locations: LocationIndex,
  errors: YamlProblem[],
  warnings: YamlProblem[],
): RolloutFact | undefined {
  const rollout = asRecord(value);
  if (rollout === undefined) return undefined;
  const rolloutKey = locations.lookup(["rollout"])?.key ?? { line: 1, col: 1 };
  const at = (path: readonly (string | number)[]): Position =>
    locations.lookup(["rollout", ...path])?.value ?? rolloutKey;
  const placed = ({ line, col }: Position): SourceLocation => ({ file, line, col });

  const waves: RolloutWaveSpec[] = [];
  const projectSources: SourceLocation[][] = [];
  const names = new Map<string, Position>();
  const projectWaves = new Map<string, string>();
  let largestPercent: { percent: number; name: string } | undefined;
  let complete: string | undefined;
  (Array.isArray(rollout.waves) ? rollout.waves : []).forEach((waveValue, index) => {
    const written = asRecord(waveValue);
    if (written === undefined || typeof written.name !== "string") return;
    const name = written.name;
    const position = at(["waves", index, "name"]);
    const earlier = names.get(name);
    if (earlier !== undefined) {
      errors.push({
        position,
        message: `wave "${name}" is also named at line ${earlier.line}; give each wave its own name`,
      });
    }
    names.set(name, position);
    if (complete !== undefined) {
      warnings.push({
        position,
        message: `wave "${name}" comes after wave "${complete}", which already reaches 100% of the plan's projects: it will never write anything`,
      });
    }
    const wave: RolloutWaveSpec = { name, source: placed(position) };
    const sources: SourceLocation[] = [];
    const hasProjects = Array.isArray(written.projects);
    // A wave with a key the schema refuses (a misspelt `project:`, `percent: "50%"`) is the schema's
    // to report: that it says neither would be a second error for one slip.
    const refusedKey = Object.keys(written).some((key) => key !== "name");
    if (hasProjects === (typeof written.percent === "number") && (hasProjects || !refusedKey)) {
      errors.push({
        position,
        message: hasProjects
          ? `wave "${name}" gives both projects and percent; a wave is either named projects or a share of the plan's projects`
          : `wave "${name}" says neither which projects nor what share; give it \`projects: [...]\` or \`percent: N\``,
      });
    }
    if (Array.isArray(written.projects)) {
      const projects: string[] = [];
      wave.projects = projects;
      written.projects.forEach((project, projectIndex) => {
        if (typeof project !== "string") return;
        const projectPosition = at(["waves", index, "projects", projectIndex]);
        const other = projectWaves.get(project);
        if (other !== undefined) {
          errors.push({
            position: projectPosition,
            message:
              other === name
                ? `project "${project}" is named twice in wave "${name}"`
                : `project "${project}" is already in wave "${other}"; a project belongs to one wave`,
          });
          return;
        }
        projectWaves.set(project, name);
        projects.push(project);
        sources.push(placed(projectPosition));
      });
    }
    const { percent } = written;
    if (typeof percent === "number") {
      wave.percent = percent;
      if (largestPercent !== undefined && percent < largestPercent.percent) {
        errors.push({
          position: at(["waves", index, "percent"]),
          message: `wave "${name}" says percent: ${percent}, less than the ${largestPercent.percent} wave "${largestPercent.name}" already reaches; a wave's percent counts the earlier waves, so it never shrinks`,
        });
      } else largestPercent = { percent, name };
      if (percent >= 100) complete ??= name;
    }
    waves.push(wave);
    projectSources.push(sources);
  });

  // A bake that is not a duration is the schema's to report (its pattern); the default stands in.
  const bakeMs =
    (typeof rollout.bake === "string" ? parseDuration(rollout.bake) : undefined) ?? ROLLOUT_DEFAULTS.bakeMs;
  const healthValue = asRecord(rollout.health);
  const logs = asRecord(healthValue?.logs);
  const prometheus = readPrometheus(asRecord(healthValue?.prometheus), at, errors);
  const health: RolloutHealthSpec = {};
  // The logs are judged when they are named, and when no signal is: the default gate.
  if (logs !== undefined || prometheus === undefined) {
    health.logs = {
      maxErrorRatio: orDefault(logs?.max_error_ratio, ROLLOUT_DEFAULTS.maxErrorRatio),
      minEntries: orDefault(logs?.min_entries, ROLLOUT_DEFAULTS.minEntries),
      allowUnknown: orDefault(logs?.allow_unknown, ROLLOUT_DEFAULTS.allowUnknown),
    };
  }
  if (prometheus !== undefined) health.prometheus = prometheus;
  return {
    waves,
    bakeMs,
    health,
    failureBudget: orDefault(rollout.failure_budget, ROLLOUT_DEFAULTS.failureBudget),
    onFailure: rollout.on_failure === "halt" ? "halt" : ROLLOUT_DEFAULTS.onFailure,
    source: placed(rolloutKey),
    projectSources,
  };
}

/** As written when it has its default's type (else the schema reports it). */
function orDefault<T extends number | boolean>(value: unknown, fallback: T): T {
  return typeof value === typeof fallback ? (value as T) : fallback;
}

/** A problem at a key of `health.prometheus`. */
type Fail = (key: string, message: string) => void;

const QUERY_PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const KNOWN_PLACEHOLDERS: ReadonlySet<string> = new Set(["project", "window"]);

/** When its keys have the schema's types (the schema reports them otherwise). */
function readPrometheus(
  prometheus: Record<string, unknown> | undefined,
  at: (path: readonly (string | number)[]) => Position,
  errors: YamlProblem[],
): PrometheusHealthSpec | undefined {
  if (prometheus === undefined) return undefined;
  const { url, query, max } = prometheus;
  if (typeof url !== "string" || typeof query !== "string" || typeof max !== "number") return undefined;
  const fail: Fail = (key, message) => errors.push({ position: at(["health", "prometheus", key]), message });
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed === undefined)
    fail("url", `prometheus url "${url}" is not a URL; give e.g. http://prometheus:9090`);
  if (parsed !== undefined && (parsed.username !== "" || parsed.password !== "")) {
    fail(
      "url",
      "prometheus url holds a user or password: it would be written to the plan and the rollout journal; give Prometheus's URL without them",
    );
  }
  if (parsed !== undefined && (parsed.search !== "" || parsed.hash !== "")) {
    fail(
      "url",
      `prometheus url "${url}" has a query or fragment: give Prometheus's base URL (pcsync asks /api/v1/query under it)`,
    );
  }
  const names = [...query.matchAll(QUERY_PLACEHOLDER)].map((match) => match[1] ?? "");
  for (const name of new Set(names)) {
    if (!KNOWN_PLACEHOLDERS.has(name))
      fail(
        "query",
        `prometheus query holds {{${name}}}: it knows {{project}} (the project's id) and {{window}} (the time since the wave's writes)`,
      );
  }
  if (!names.includes("project")) {
    fail(
      "query",
      'prometheus query holds no {{project}}: it must give each project its own value, e.g. sum(rate(errors_total{project="{{project}}"}[5m]))',
    );
  }
  const auth = readPrometheusAuth(prometheus, fail);
  return {
    url,
    query,
    max,
    allowUnknown: orDefault(prometheus.allow_unknown, ROLLOUT_DEFAULTS.allowUnknown),
    ...(auth === undefined ? {} : { auth }),
  };
}

/** One of `bearer_token_env` and `basic_auth`, at most (the schema checks their shapes). */
function readPrometheusAuth(prometheus: Record<string, unknown>, fail: Fail): PrometheusAuth | undefined {
  const token = prometheus.bearer_token_env;
  const basic = asRecord(prometheus.basic_auth);
  if (typeof token === "string" && basic !== undefined) {
    fail(
      "bearer_token_env",
      "prometheus has both bearer_token_env and basic_auth: Prometheus is sent one Authorization header; keep the one it asks for",
    );
    return undefined;
  }
  if (typeof token === "string") return { kind: "bearer", tokenEnv: token };
  const { username, password_env: passwordEnv } = basic ?? {};
  if (typeof username === "string" && typeof passwordEnv === "string")
    return { kind: "basic", username, passwordEnv };
  return undefined;
}
