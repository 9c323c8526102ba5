// Maps a method and a raw request path to an operation of the service (handlers.ts's ROUTES): its
// handler, the scope it needs and the body it reads. Paths are matched on their raw (undecoded)
// segments so an encoded slash can never reach another resource.

import { FAMILIES } from "../families.js";
import { type Operation, ROUTES, type RouteParams } from "./handlers.js";
import { notFound } from "./http-error.js";

export type RouteMatch =
  | { kind: "operation"; operation: Operation; params: RouteParams }
  /** The path exists but not with this method: answered 405, after authentication. */
  | { kind: "wrong-method"; allowed: readonly string[] };

function matchSegments(pattern: readonly string[], segments: readonly string[]): RouteParams | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: RouteParams = {};
  for (const [index, expected] of pattern.entries()) {
    const actual = segments[index];
    if (actual === undefined || actual === "") return undefined;
    if (expected === ":project") params.project = actual;
    else if (expected === ":id") params.id = actual;
    else if (expected === ":family" || expected === ":logs-family") {
      const family = FAMILIES.find((candidate) => candidate.pathSegment === actual);
      if (!family || (expected === ":logs-family" && !family.hasLogs)) return undefined;
      params.family = family.name;
    } else if (expected !== actual) return undefined;
  }
  return params;
}

/** The path part of a request target, with the one optional trailing slash removed. */
function pathOfTarget(target: string): string {
  const path = target.split("?", 1)[0] ?? "";
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/** Throws a 404 for a path the service does not have. */
export function matchRoute(method: string, target: string): RouteMatch {
  const path = pathOfTarget(target);
  if (!path.startsWith("/")) throw notFound();
  const segments = path.slice(1).split("/");
  for (const [pattern, methods] of ROUTES) {
    const params = matchSegments(pattern.split("/"), segments);
    if (params === undefined) continue;
    const operation = methods[method];
    if (operation === undefined) return { kind: "wrong-method", allowed: Object.keys(methods) };
    return { kind: "operation", operation, params };
  }
  throw notFound();
}
