// The error commands throw when the manifest is invalid; it carries every diagnostic so callers
// can print or annotate them, and maps to exit code 1.

import { PcsyncError } from "../errors.js";
import type { ManifestDiagnostic } from "./diagnostics.js";

export class ManifestError extends PcsyncError {
  readonly diagnostics: ManifestDiagnostic[];

  constructor(diagnostics: readonly ManifestDiagnostic[], message = summarizeErrors(diagnostics)) {
    super("manifest_invalid", message);
    this.diagnostics = [...diagnostics];
  }
}

/** "manifest invalid: 3 errors in 2 files; fix them and run pcsync validate" */
export function summarizeErrors(diagnostics: readonly ManifestDiagnostic[]): string {
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === "error");
  const files = new Set(errors.map((diagnostic) => diagnostic.file)).size;
  const count = errors.length === 1 ? "1 error" : `${errors.length} errors`;
  const where = files === 1 ? "1 file" : `${files} files`;
  return `manifest invalid: ${count} in ${where}`;
}
