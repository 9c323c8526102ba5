// Collects the problems of a manifest's expansion: the same problem met while expanding several
// projects (a template used by 200 of them) is reported once, naming the projects.

import { type ManifestDiagnostic, makeError, makeWarning } from "./diagnostics.js";
import type { SourceLocation } from "./types.js";

/** Most distinct expansion errors reported: one mistake in a template used by 200 projects is one error. */
const MAX_EXPANSION_ERRORS = 100;
/** The stand-in for the projects of `projects: all` offline; never a valid project id. */
export const ANY_PROJECT = "*";
/** Projects named in one "(for projects ...)" note before "and N more". */
const PROJECTS_SHOWN = 5;

/** Collects problems; the same problem met while expanding several projects is reported once, naming them. */
export class Reporter {
  readonly warnings: ManifestDiagnostic[] = [];
  readonly listingWarnings: ManifestDiagnostic[] = [];
  private readonly found = new Map<string, { at: SourceLocation; message: string; projects: string[] }>();
  private dropped = 0;
  private readonly projectWarnings = new Map<
    string,
    { warning: ManifestDiagnostic; message: string; projects: string[] }
  >();

  error(at: SourceLocation, message: string, project?: string): void {
    const key = `${at.file}\0${at.line}\0${at.col}\0${message}`;
    const known = this.found.get(key);
    if (known === undefined) {
      if (this.found.size >= MAX_EXPANSION_ERRORS) {
        this.dropped += 1;
        return;
      }
      this.found.set(key, { at, message, projects: project === undefined ? [] : [project] });
    } else if (project !== undefined && known.projects.at(-1) !== project) known.projects.push(project);
  }

  warn(at: SourceLocation, message: string, project?: string): void {
    if (project === undefined) {
      this.warnings.push(makeWarning(at.file, at, message));
      return;
    }
    // One warning per place, naming the projects it arises for (a template used by 200 projects).
    const key = `${at.file}\0${at.line}\0${at.col}\0${message}`;
    const known = this.projectWarnings.get(key);
    if (known === undefined) {
      const warning = makeWarning(at.file, at, message);
      this.projectWarnings.set(key, { warning, message, projects: [project] });
      this.warnings.push(warning);
    } else if (known.projects.at(-1) !== project) known.projects.push(project);
  }

  /** A warning that only the project listing can give (an `except` of an `all` set it lacks). */
  warnFromListing(at: SourceLocation, message: string): void {
    const warning = makeWarning(at.file, at, message);
    this.warnings.push(warning);
    this.listingWarnings.push(warning);
  }

  /** Names the projects of each warning that arose for some; call once, after the expansion. */
  finishWarnings(): void {
    for (const { warning, message, projects } of this.projectWarnings.values())
      warning.message = `${message}${forProjects(projects)}`;
  }

  errors(): ManifestDiagnostic[] {
    const errors = [...this.found.values()].map(({ at, message, projects }) =>
      makeError(at.file, at, `${message}${forProjects(projects)}`),
    );
    const last = errors.at(-1);
    if (this.dropped > 0 && last !== undefined) {
      errors.push({ ...last, message: `${this.dropped} more errors not shown; fix the ones above first` });
    }
    return errors;
  }
}

function forProjects(listed: readonly string[]): string {
  const projects = listed.map((project) => (project === ANY_PROJECT ? "any of `projects: all`" : project));
  if (projects.length === 0) return "";
  if (projects.length === 1) return ` (for project ${projects[0]})`;
  const shown = projects.slice(0, PROJECTS_SHOWN).join(", ");
  const more = projects.length > PROJECTS_SHOWN ? ` and ${projects.length - PROJECTS_SHOWN} more` : "";
  return ` (for projects ${shown}${more})`;
}
