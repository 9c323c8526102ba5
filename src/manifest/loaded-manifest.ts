// The manifest as loaded, before the planner may see it: the desired state of the projects it
// names and, while a project set says `projects: all`, the blocks still to expand once the API
// key's project listing is read (resolveProjectSets makes a DesiredState of it).

import type { ManifestBlocks } from "./expand-types.js";
import type { DesiredState } from "./types.js";

export interface LoadedManifest extends DesiredState {
  /**
   * Present when a project set says `projects: all`: the manifest as blocks, expanded again at plan
   * time once the project listing is read. Until then, `families` holds the expansion for the
   * projects the manifest names explicitly.
   */
  unresolved?: ManifestBlocks;
}
