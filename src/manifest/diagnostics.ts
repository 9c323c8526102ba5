// Manifest diagnostics: one problem at a file position, and how it is printed for people
// (`file:line:col: message`) and for GitHub Actions (`::error file=...::message`).

import { compareText } from "./compare-projects.js";

export interface ManifestDiagnostic {
  /** The file as the user named it (relative to the working directory when under it). */
  file: string;
  /** 1-based line; 0 when the problem is the file as a whole (missing, too big, unreadable). */
  line: number;
  /** 1-based column; 0 with line 0. */
  col: number;
  message: string;
  severity: "error" | "warning";
}

/** As plans and messages that name a second place write it. */
export function formatSource(source: { file: string; line: number }): string {
  return `${source.file}:${source.line}`;
}

export interface Position {
  line: number;
  col: number;
}

/** A problem in the file being read; it becomes a diagnostic once the file is named. */
export interface YamlProblem {
  position: Position;
  message: string;
}

export const WHOLE_FILE: Position = { line: 0, col: 0 };

export function makeError(file: string, position: Position, message: string): ManifestDiagnostic {
  return { file, line: position.line, col: position.col, message, severity: "error" };
}

export function makeWarning(file: string, position: Position, message: string): ManifestDiagnostic {
  return { file, line: position.line, col: position.col, message, severity: "warning" };
}

export function formatDiagnostic(diagnostic: ManifestDiagnostic): string {
  const where =
    diagnostic.line > 0 ? `${diagnostic.file}:${diagnostic.line}:${diagnostic.col}` : diagnostic.file;
  const label = diagnostic.severity === "warning" ? "warning: " : "";
  // One diagnostic is one line: a message never smuggles a newline into the output.
  return `${where}: ${label}${diagnostic.message.replace(/\r\n|\r|\n/g, "\\n")}`;
}

export function formatGithubAnnotation(diagnostic: ManifestDiagnostic): string {
  const properties = [`file=${escapeProperty(diagnostic.file)}`];
  if (diagnostic.line > 0) properties.push(`line=${diagnostic.line}`, `col=${diagnostic.col}`);
  return `::${diagnostic.severity} ${properties.join(",")}::${escapeData(diagnostic.message)}`;
}

/** By file (in `fileOrder`), then position; stable otherwise. */
export function sortDiagnostics(
  diagnostics: readonly ManifestDiagnostic[],
  fileOrder: readonly string[],
): ManifestDiagnostic[] {
  const rank = new Map(fileOrder.map((file, index) => [file, index]));
  return [...diagnostics].sort(
    (a, b) =>
      (rank.get(a.file) ?? Number.MAX_SAFE_INTEGER) - (rank.get(b.file) ?? Number.MAX_SAFE_INTEGER) ||
      compareText(a.file, b.file) ||
      a.line - b.line ||
      a.col - b.col,
  );
}

// GitHub's escaping rules for workflow commands (as in @actions/core).
function escapeData(value: string): string {
  return value.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

function escapeProperty(value: string): string {
  return escapeData(value).replace(/:/g, "%3A").replace(/,/g, "%2C");
}
