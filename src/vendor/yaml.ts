// The yaml package, as pcsync imports it. From source this file re-exports the package; the build
// replaces its output with the package bundled into one file (scripts/bundle-yaml.mjs): loading
// yaml's 74 CommonJS modules one by one cost `pcsync validate` a third of its start-up.

export * from "yaml";
