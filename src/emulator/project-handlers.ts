// The project endpoints a client uses to find its project id: the list of projects the key can
// see, and one project (which also resolves `@current`).

import type { Project } from "../wire-types.js";
import { accessibleProjects } from "./auth.js";
import { type Handler, json } from "./handler-types.js";
import { paginate, parsePageRequest } from "./pagination.js";
import type { ProjectData } from "./types.js";

function renderProject(project: ProjectData): Project {
  return { id: project.id, name: project.name };
}

export const listProjects: Handler = (context) => {
  const page = parsePageRequest(context.requestUrl.searchParams);
  const projects = accessibleProjects(context.key, context.store.projects);
  const rendered = paginate(projects, page, context.requestUrl);
  return json(200, { ...rendered, results: rendered.results.map(renderProject) });
};

export const retrieveProject: Handler = (context) => {
  if (context.project === undefined) throw new Error("project route without project");
  return json(200, renderProject(context.project));
};
