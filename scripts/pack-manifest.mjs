// `npm pack` hooks: the tarball's package.json carries no scripts. Its `prepare` (which builds a git
// install) would otherwise make npm warn, on every install of the tarball, of install scripts not
// covered by allowScripts, although the tarball is built already. `prepack` strips them, after the
// build; `postpack` puts package.json back byte for byte. A git install still builds: npm runs
// `prepare` from the repository's package.json, which keeps it.
//
//   node scripts/pack-manifest.mjs strip | restore

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const manifest = fileURLToPath(new URL("../package.json", import.meta.url));
const savedDirectory = new URL("../node_modules/.cache/pcsync-pack/", import.meta.url);
const saved = new URL("package.json", savedDirectory);

function strip() {
  const text = readFileSync(manifest, "utf8");
  const parsed = JSON.parse(text);
  if (parsed.scripts === undefined && existsSync(saved)) {
    // An earlier pack stopped before postpack: package.json is still stripped; keep the original.
    process.stderr.write(
      "note: package.json was left stripped by an interrupted npm pack; using the saved copy\n",
    );
  } else {
    mkdirSync(savedDirectory, { recursive: true });
    writeFileSync(saved, text);
  }
  const { scripts: _scripts, ...packed } = parsed;
  writeFileSync(manifest, `${JSON.stringify(packed, null, 2)}\n`);
}

function restore() {
  if (!existsSync(saved)) return;
  writeFileSync(`${manifest}.restoring`, readFileSync(saved));
  renameSync(`${manifest}.restoring`, manifest);
  rmSync(saved);
}

const step = process.argv[2];
if (step === "strip") strip();
else if (step === "restore") restore();
else {
  process.stderr.write("usage: node scripts/pack-manifest.mjs strip|restore\n");
  process.exit(1);
}
