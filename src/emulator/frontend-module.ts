// The JavaScript module served by the frontend endpoints: what a site loads to run the app, here a
// stand-in that exports getFrontendApp() with the config's identity.

import type { PluginData, StoredRecord } from "./types.js";

export const FRONTEND_CONTENT_TYPE = "application/javascript; charset=UTF-8";

export function renderFrontendModule(record: StoredRecord, plugin: PluginData | undefined): string {
  // JSON.stringify escapes quotes; replacing "<" keeps the text inert if it is ever inlined in HTML.
  const app = JSON.stringify({
    pluginConfigId: record.id,
    pluginId: record.plugin,
    name: record.name ?? plugin?.name ?? null,
    enabled: record.enabled,
  }).replaceAll("<", "\\u003c");
  return [
    '"use strict";',
    `// Frontend app of plugin config ${record.id}, served by the pcsync emulator.`,
    "export function getFrontendApp(require) {",
    `  const app = ${app};`,
    "  return {",
    "    inject: ({ config, posthog }) => {",
    "      void config;",
    "      void posthog;",
    "    },",
    "    app,",
    "  };",
    "}",
    "",
  ].join("\n");
}
