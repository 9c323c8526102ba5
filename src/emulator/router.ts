// Maps a method and a raw request path to an operation of the service. Paths are matched on their
// raw (undecoded) segments so an encoded slash can never reach another resource.

import { FAMILIES, type FamilyName } from "../families.js";
import { notFound } from "./http-error.js";

export type Operation =
  | "projects.list"
  | "projects.retrieve"
  | "list"
  | "create"
  | "retrieve"
  | "update"
  | "delete"
  | "frontend"
  | "job"
  | "logs"
  | "rearrange";

export interface RouteParams {
  /** The raw project segment: a decimal id, `@current`, or anything a client sent. */
  project?: string;
  family?: FamilyName;
  /** The raw record id segment. */
  id?: string;
}

export type RouteMatch =
  | { kind: "operation"; operation: Operation; params: RouteParams }
  /** The path exists but not with this method: answered 405, after authentication. */
  | { kind: "wrong-method"; allowed: readonly string[] };

type Segment = string | ":project" | ":family" | ":logs-family" | ":id";

interface RouteDefinition {
  segments: readonly Segment[];
  methods: Readonly<Partial<Record<string, Operation>>>;
}

// First match wins, so the literal `rearrange` shadows a record id of that name.
const ROUTES: readonly RouteDefinition[] = [
  { segments: ["api", "projects"], methods: { GET: "projects.list" } },
  { segments: ["api", "projects", ":project"], methods: { GET: "projects.retrieve" } },
  { segments: ["api", "projects", ":project", ":family"], methods: { GET: "list", POST: "create" } },
  {
    segments: ["api", "projects", ":project", ":family", "rearrange"],
    methods: { PATCH: "rearrange" },
  },
  {
    segments: ["api", "projects", ":project", ":family", ":id"],
    methods: { GET: "retrieve", PATCH: "update", DELETE: "delete" },
  },
  { segments: ["api", "projects", ":project", ":family", ":id", "frontend"], methods: { GET: "frontend" } },
  { segments: ["api", "projects", ":project", ":family", ":id", "job"], methods: { POST: "job" } },
  { segments: ["api", "projects", ":project", ":logs-family", ":id", "logs"], methods: { GET: "logs" } },
];

function familyOfSegment(segment: string, needsLogs: boolean): FamilyName | undefined {
  const family = FAMILIES.find((candidate) => candidate.pathSegment === segment);
  if (!family || (needsLogs && !family.hasLogs)) return undefined;
  return family.name;
}

function matchSegments(pattern: readonly Segment[], segments: readonly string[]): RouteParams | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: RouteParams = {};
  for (const [index, expected] of pattern.entries()) {
    const actual = segments[index];
    if (actual === undefined || actual === "") return undefined;
    if (expected === ":project") params.project = actual;
    else if (expected === ":id") params.id = actual;
    else if (expected === ":family" || expected === ":logs-family") {
      const family = familyOfSegment(actual, expected === ":logs-family");
      if (family === undefined) return undefined;
      params.family = family;
    } else if (expected !== actual) return undefined;
  }
  return params;
}

/** The path part of a request target, with the one optional trailing slash removed. */
export function pathOfTarget(target: string): string {
  const queryStart = target.indexOf("?");
  const path = queryStart === -1 ? target : target.slice(0, queryStart);
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/** Throws a 404 for a path the service does not have. */
export function matchRoute(method: string, target: string): RouteMatch {
  const path = pathOfTarget(target);
  if (!path.startsWith("/")) throw notFound();
  const segments = path.slice(1).split("/");
  for (const route of ROUTES) {
    const params = matchSegments(route.segments, segments);
    if (params === undefined) continue;
    const operation = route.methods[method];
    if (operation === undefined) return { kind: "wrong-method", allowed: Object.keys(route.methods) };
    return { kind: "operation", operation, params };
  }
  throw notFound();
}
