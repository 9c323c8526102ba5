// One rule for the schema validators the build compiles ahead of time (scripts/build-validators.mjs):
// built code must load them, and a build that lacks one or cannot load it stops with a message
// saying how to repair it, rather than quietly compiling schemas at every run. Only modules run
// from their TypeScript source (the tests), which have no generated files beside them, compile
// the schemas themselves, with the ajv compiler imported for that alone.

import { describeError } from "./errors.js";
import { InputError } from "./input-error.js";

/**
 * The generated module `importing` loads, from built code; `undefined` from source, where the
 * caller compiles instead. `what` says what the module holds, for the message; `importerUrl` is
 * the caller's `import.meta.url` (a `.ts` URL when run from source).
 */
export async function loadPrecompiled<T>(
  importing: Promise<T>,
  what: string,
  importerUrl: string,
): Promise<T | undefined> {
  try {
    return await importing;
  } catch (error) {
    const notFound = (error as { code?: unknown } | null)?.code === "ERR_MODULE_NOT_FOUND";
    if (notFound && isFromSource(importerUrl)) return undefined;
    throw new InputError("build_broken", { what, reason: describeError(error).split("\n")[0] ?? "" });
  }
}

/**
 * The validator a generated module exports as `validate`, as a getter: from the build that module
 * (it must load), from source the validator `importCompiler` makes, compiled at first use.
 */
export async function precompiledValidator<V>(
  importing: Promise<{ validate: V }>,
  what: string,
  importerUrl: string,
  importCompiler: () => Promise<() => V>,
): Promise<() => V> {
  const precompiled = await loadPrecompiled(importing, what, importerUrl);
  if (precompiled !== undefined) return () => precompiled.validate;
  const compile = await importCompiler();
  let compiled: V | undefined;
  return () => {
    compiled ??= compile();
    return compiled;
  };
}

/** Whether the module at this URL runs from its TypeScript source rather than from the build. */
export function isFromSource(moduleUrl: string): boolean {
  return /\.[cm]?ts$/.test(new URL(moduleUrl).pathname);
}
