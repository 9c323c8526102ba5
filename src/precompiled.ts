// Built code must load the validators the build precompiles, and stops with a repair message rather than
// quietly compile schemas at every run; only code run from source (the tests) compiles them itself.

import { describeError } from "./errors.js";
import { InputError } from "./input-error.js";

/** `undefined` from source, where the caller compiles instead; `importerUrl`: its `import.meta.url`. */
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

/** From source, the validator `importCompiler` makes, compiled at first use. */
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

export function isFromSource(moduleUrl: string): boolean {
  return /\.[cm]?ts$/.test(new URL(moduleUrl).pathname);
}
