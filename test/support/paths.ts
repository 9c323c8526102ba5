// Where the repository and its examples are, for tests that run the CLI on the shipped manifests.

import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPOSITORY = fileURLToPath(new URL("../../", import.meta.url));
export const EXAMPLES = join(REPOSITORY, "examples");
