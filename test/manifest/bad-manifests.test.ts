// A table of broken manifests: each must be refused with the position and message a user would
// need to fix it, and nothing else.

import { describe, expect, it } from "vitest";
import { formatDiagnostic, loadManifestSources, variablesFromEnvironment } from "../../src/manifest/index.js";

interface BadCase {
  name: string;
  yaml: string;
  /** The environment (only PCSYNC_VAR_* are variables). */
  env?: Record<string, string>;
  /** Every error expected, formatted, in order; a string must match exactly, a RegExp the whole line. */
  errors: (string | RegExp)[];
}

const HEAD = 'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n';

const cases: BadCase[] = [
  {
    name: "misspelt config key, with a suggestion",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          enabeld: true\n`,
    errors: ['bad.yaml:8:11: unknown key "enabeld"; did you mean "enabled"?'],
  },
  {
    name: "unknown key without a close match lists the allowed keys",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          colour: red\n`,
    errors: [
      'bad.yaml:8:11: unknown key "colour"; allowed here: "name", "plugin", "enabled", "description", "match_action", "order", "id", "deleted", "protect", "ignore_fields"',
    ],
  },
  // A key misspelt inside a list other than `configs` (a project set, a wave) gets its suggestion too.
  {
    name: "misspelt key in a project set's overrides, with a suggestion",
    yaml: 'version: 1\nproject_sets:\n  - projects: ["1"]\n    plugin_configs:\n      overrides:\n        GeoIP: { enabld: true }\n',
    errors: ['bad.yaml:6:18: unknown key "enabld"; did you mean "enabled"?'],
  },
  {
    name: "unknown key in a project set's family block lists the allowed keys",
    yaml: 'version: 1\nproject_sets:\n  - projects: ["1"]\n    plugin_configs:\n      colour: red\n',
    errors: [
      'bad.yaml:5:7: unknown key "colour"; allowed here: "prune", "drift", "configs", "overrides", "omit", "protect", "fields"',
    ],
  },
  {
    name: "misspelt key of a project set, with a suggestion",
    yaml: 'version: 1\nproject_sets:\n  - projects: ["1"]\n    excpet: ["2"]\n',
    errors: ['bad.yaml:4:5: unknown key "excpet"; did you mean "except"?'],
  },
  {
    name: "misspelt key of a rollout wave, with a suggestion",
    yaml: "version: 1\nrollout:\n  waves:\n    - name: all\n      precent: 100\n  bake: 1m\n  health:\n    logs: {}\nprojects: {}\n",
    // One error for one slip: not also that the wave says neither which projects nor what share.
    errors: ['bad.yaml:5:7: unknown key "precent"; did you mean "percent"?'],
  },
  // A wrong value in a list other than `configs` is named by its list and place.
  {
    name: "a project of a project set that is neither text nor a number",
    yaml: 'version: 1\nproject_sets:\n  - projects: ["1", true]\n',
    errors: [
      'bad.yaml:3:21: "projects" entry #2 must be text or a whole number, got true; if it is meant as text, quote it: "true"',
    ],
  },
  {
    name: "a wave whose name is not text",
    yaml: "version: 1\nrollout:\n  waves:\n    - name: [a]\n      percent: 100\n  bake: 1m\n  health:\n    logs: {}\nprojects: {}\n",
    errors: [/^bad\.yaml:4:13: "name" must be/],
  },
  {
    name: "an empty wave name is said to be one, not a control character",
    yaml: 'version: 1\nrollout:\n  waves:\n    - name: ""\n      percent: 100\n  health:\n    logs: {}\nprojects: {}\n',
    errors: [
      'bad.yaml:4:13: "name" must be 1 to 40 letters, digits, spaces, _, . or -, starting with a letter or a digit (such as canary), got text ""',
    ],
  },
  {
    name: "a bake that is not a duration gives examples of one",
    yaml: "version: 1\nrollout:\n  waves:\n    - name: all\n      percent: 100\n  bake: -1s\n  health:\n    logs: {}\nprojects: {}\n",
    errors: ['bad.yaml:6:9: "bake" must be a duration such as 30s, 10m, 1h or 1h30m, got text "-1s"'],
  },
  {
    name: "a bake without its unit is told to add one, not to quote the number (quoted, it would still be no duration)",
    yaml: "version: 1\nrollout:\n  waves:\n    - name: all\n      percent: 100\n  bake: 10\n  health:\n    logs: {}\nprojects: {}\n",
    errors: ['bad.yaml:6:9: "bake" must be text, got 10; a duration has a unit: bake: 10s (or 10m, 10h)'],
  },
  {
    name: "a wave with a name alone says neither which projects nor what share",
    yaml: "version: 1\nrollout:\n  waves:\n    - name: all\n  health:\n    logs: {}\nprojects: {}\n",
    errors: [
      'bad.yaml:4:13: wave "all" says neither which projects nor what share; give it `projects: [...]` or `percent: N`',
    ],
  },
  {
    name: "a wave's misspelt key or a percent written as text is one error each, not also 'says neither'",
    yaml: 'version: 1\nrollout:\n  waves:\n    - name: canary\n      percent: "50%"\n    - name: rest\n      project: ["1"]\n  health:\n    logs: {}\nprojects: {}\n',
    errors: [
      'bad.yaml:5:16: "percent" must be a number, got text "50%"',
      'bad.yaml:7:7: unknown key "project"; did you mean "projects"?',
    ],
  },
  {
    name: "a fraction where a whole number goes, other than an id or an order",
    yaml: "version: 1\nrollout:\n  waves:\n    - name: all\n      percent: 100\n  failure_budget: 1.5\n  health:\n    logs: {}\nprojects: {}\n",
    errors: ['bad.yaml:6:19: "failure_budget" must be a whole number, got 1.5'],
  },
  {
    name: "unknown family name",
    yaml: 'version: 1\nprojects:\n  "1":\n    plugin_config:\n      configs: []\n',
    errors: ['bad.yaml:4:5: unknown family "plugin_config"; did you mean "plugin_configs"?'],
  },
  {
    name: "unknown family name without a close match",
    yaml: 'version: 1\nprojects:\n  "1":\n    apps:\n      configs: []\n',
    errors: [
      'bad.yaml:4:5: unknown family "apps"; the families are: "plugin_configs", "pipeline_frontend_apps_configs"',
    ],
  },
  {
    name: "unknown top-level key",
    yaml: "version: 1\nproject: {}\n",
    errors: ['bad.yaml:2:1: unknown key "project"; did you mean "projects"?'],
  },
  {
    name: "missing version",
    yaml: "projects: {}\n",
    errors: ['bad.yaml:1:1: missing required key "version" at the top of the manifest; add `version: 1`'],
  },
  {
    name: "wrong version",
    yaml: "version: 2\n",
    errors: ['bad.yaml:1:10: "version" must be 1, got 2; this pcsync reads manifest version 1'],
  },
  {
    name: "missing plugin",
    yaml: `${HEAD}        - name: GeoIP\n          enabled: true\n`,
    errors: [
      'bad.yaml:6:11: missing required key "plugin" in config "GeoIP"; add `plugin: <id>` with the id of the plugin to run',
    ],
  },
  {
    name: "missing name",
    yaml: `${HEAD}        - plugin: 1\n`,
    errors: [
      'bad.yaml:6:11: missing required key "name" in config #1 of plugin_configs; add `name: ...`, unique within the family',
    ],
  },
  {
    name: "missing configs",
    yaml: 'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      prune: true\n',
    errors: [
      'bad.yaml:5:7: missing required key "configs" in "plugin_configs"; add `configs:` with the list of configs (`configs: []` for none)',
    ],
  },
  {
    // No template to `use:` in this manifest: none is suggested.
    name: "missing configs in a project set, with no templates",
    yaml: 'version: 1\nproject_sets:\n  - projects: ["1"]\n    plugin_configs:\n      prune: true\n',
    errors: [
      'bad.yaml:5:7: missing required key "configs" in "plugin_configs"; add `configs:` with the list of configs (`configs: []` for none) (for project 1)',
    ],
  },
  {
    name: "a family left empty",
    yaml: 'version: 1\nprojects:\n  "1":\n    plugin_configs:\n',
    errors: [
      'bad.yaml:4:20: "plugin_configs" must be a mapping of keys to values, got nothing (null); it is empty: give its keys, indented below it',
    ],
  },
  {
    name: "plugin given as quoted text",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: "1"\n`,
    errors: ['bad.yaml:7:19: "plugin" must be a whole number, got text "1"; remove the quotes'],
  },
  {
    name: "plugin below 1",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 0\n`,
    errors: ['bad.yaml:7:19: "plugin" must be 1 or more, got 0'],
  },
  {
    name: "negative id",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          id: -4\n`,
    errors: ['bad.yaml:8:15: "id" must be 1 or more, got -4 (record ids start at 1)'],
  },
  {
    name: "non-integer id",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          id: 1.5\n`,
    errors: ['bad.yaml:8:15: "id" must be a whole number, got 1.5; ids and orders are whole numbers'],
  },
  {
    name: "negative order",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          order: -1\n`,
    errors: ['bad.yaml:8:18: "order" must be 0 or more, got -1'],
  },
  {
    name: "yes is not a boolean in YAML 1.2",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          enabled: yes\n`,
    errors: [
      'bad.yaml:8:20: "enabled" must be true or false, got text "yes"; write true or false, without quotes (YAML 1.2 reads yes, no, on and off as text)',
    ],
  },
  {
    name: "a quoted yes, and a quoted true",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          enabled: "yes"\n        - name: B\n          plugin: 1\n          enabled: "true"\n`,
    errors: [
      'bad.yaml:8:20: "enabled" must be true or false, got text "yes"; write true or false, without quotes (YAML 1.2 reads yes, no, on and off as text)',
      'bad.yaml:11:20: "enabled" must be true or false, got text "true"; write true without quotes',
    ],
  },
  {
    name: "a number or a boolean where text goes: quote it",
    yaml: `${HEAD}        - name: 42\n          plugin: 1\n          description: 42\n        - name: B\n          plugin: 1\n          description: false\n`,
    errors: [
      'bad.yaml:6:17: "name" must be text, got 42; if it is meant as text, quote it: name: "42"',
      'bad.yaml:8:24: "description" must be text or null, got 42; if it is meant as text, quote it: description: "42"',
      'bad.yaml:11:24: "description" must be text or null, got false; if it is meant as text, quote it: description: "false"',
    ],
  },
  {
    name: "a list right under a family: it goes under configs",
    yaml: 'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      - name: GeoIP\n        plugin: 1\n',
    errors: [
      'bad.yaml:5:7: "plugin_configs" must be a mapping of keys to values, got a list; put the list under `configs:`: indent `configs:` below plugin_configs:, and the `- name:` items below configs:',
    ],
  },
  {
    name: "a list right under a template's family",
    yaml: "version: 1\ntemplates:\n  base:\n    pipeline_frontend_apps_configs:\n      - name: Bar\n        plugin: 1\nprojects: {}\n",
    errors: [
      /^bad\.yaml:5:7: "pipeline_frontend_apps_configs" must be a mapping .*; put the list under `configs:`/,
    ],
  },
  {
    name: "use: written as text",
    yaml: 'version: 1\ntemplates:\n  base:\n    plugin_configs:\n      configs: []\nprojects:\n  "1":\n    use: base\n',
    errors: [
      'bad.yaml:8:10: "use" must be a list (`- item` lines), got text "base"; write it as a list: use: [base]',
    ],
  },
  {
    name: "one unknown template in a project set: one error, not its echoes",
    yaml: [
      "version: 1",
      "templates:",
      "  baseline:",
      "    plugin_configs:",
      "      configs:",
      "        - { name: GeoIP, plugin: 1 }",
      "project_sets:",
      "  - name: web",
      '    projects: ["1", "2"]',
      "    use: [basline]",
      "    plugin_configs:",
      "      prune: true",
      "      overrides:",
      "        GeoIP: { enabled: true }",
      "projects:",
      '  "1":',
      "    plugin_configs:",
      "      omit: [GeoIP]",
      "",
    ].join("\n"),
    errors: ['bad.yaml:10:11: unknown template "basline" in project set "web"; did you mean "baseline"?'],
  },
  {
    name: "an ignored field misspelt",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          ignore_fields: [enabled, enabeld]\n`,
    errors: [
      'bad.yaml:8:36: "ignore_fields" entry text "enabeld" is not one of "plugin", "enabled", "description", "match_action", "order"; did you mean "enabled"?',
    ],
  },
  {
    name: "an ignored field twice",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          ignore_fields: [order, order]\n`,
    errors: ['bad.yaml:8:26: "ignore_fields" lists text "order" twice; keep one'],
  },
  {
    name: "fields misspelt",
    yaml: 'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      fields: al\n      configs: []\n',
    errors: ['bad.yaml:5:15: "fields" text "al" is not one of "listed", "all"; did you mean "all"?'],
  },
  {
    name: "protect that is not a list",
    yaml: 'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      protect: GeoIP\n      configs: []\n',
    errors: [
      'bad.yaml:5:16: "protect" must be a list (`- item` lines), got text "GeoIP"; write it as a list: protect: [GeoIP]',
    ],
  },
  {
    name: "name with a control character",
    yaml: `${HEAD}        - name: "Geo\\u0007IP"\n          plugin: 1\n`,
    errors: [
      'bad.yaml:6:17: "name" contains a control character (U+0007 at character 4); names are one line of printable text',
    ],
  },
  {
    name: "name over 400 characters",
    yaml: `${HEAD}        - name: ${"n".repeat(401)}\n          plugin: 1\n`,
    errors: ['bad.yaml:6:17: "name" is 401 characters long; the service accepts at most 400, shorten it'],
  },
  {
    name: "description over 1000 characters",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          description: ${"d".repeat(1001)}\n`,
    errors: [
      'bad.yaml:8:24: "description" is 1001 characters long; the service accepts at most 1000, shorten it',
    ],
  },
  {
    name: "empty name",
    yaml: `${HEAD}        - name: ""\n          plugin: 1\n`,
    errors: ['bad.yaml:6:17: "name" must not be empty'],
  },
  {
    name: "duplicate name in a family",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n        - name: GeoIP\n          plugin: 2\n`,
    errors: [
      'bad.yaml:8:17: duplicate name "GeoIP" in plugin_configs of project "1" (first at line 6, column 17); a name identifies one config, rename one of them',
    ],
  },
  {
    name: "duplicate name in a family, spelled in another Unicode normalisation",
    yaml: `${HEAD}        - name: "caf\u00e9"\n          plugin: 1\n        - name: "cafe\u0301"\n          plugin: 2\n`,
    errors: [
      'bad.yaml:8:17: duplicate name "cafe\u0301" in plugin_configs of project "1" (first at line 6, column 17, as "caf\u00e9": the same name but for Unicode normalisation); a name identifies one config, rename one of them',
    ],
  },
  {
    name: "duplicate id in a file",
    yaml: `${HEAD}        - name: A\n          plugin: 1\n          id: 7\n        - name: B\n          plugin: 2\n          id: 7\n`,
    errors: [
      'bad.yaml:11:15: id 7 is already pinned by "A" (plugin_configs of project "1") at bad.yaml:8:15; a record can be managed by one config only',
    ],
  },
  {
    name: "mix of explicit and positional order",
    yaml: `${HEAD}        - name: A\n          plugin: 1\n          order: 1\n        - name: B\n          plugin: 2\n`,
    errors: [
      'bad.yaml:9:11: "B" has no order, but "A" has one (line 8); in plugin_configs of project "1" give every config an order, or none (then list position is the order)',
    ],
  },
  {
    name: "empty project key",
    yaml: 'version: 1\nprojects:\n  "":\n    plugin_configs:\n      configs: []\n',
    errors: ['bad.yaml:3:3: project id is empty; write a project id such as "1", or "@current"'],
  },
  {
    name: "project key that is not an id",
    yaml: "version: 1\nprojects:\n  web:\n    plugin_configs:\n      configs: []\n",
    errors: ['bad.yaml:3:3: project id "web" must be a decimal project id (such as "1") or "@current"'],
  },
  {
    name: "project key that interpolates to a path",
    yaml: 'version: 1\nprojects:\n  "${P}":\n    plugin_configs:\n      configs: []\n',
    env: { PCSYNC_VAR_P: "../2" },
    errors: ['bad.yaml:3:3: project id "../2" must be a decimal project id (such as "1") or "@current"'],
  },
  {
    name: "project key that interpolates to nothing",
    yaml: 'version: 1\nprojects:\n  "${P:-}":\n    plugin_configs:\n      configs: []\n',
    errors: ['bad.yaml:3:3: project id is empty; write a project id such as "1", or "@current"'],
  },
  {
    name: "two project keys equal after interpolation",
    yaml: 'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs: []\n  "${P}":\n    pipeline_frontend_apps_configs:\n      configs: []\n',
    env: { PCSYNC_VAR_P: "1" },
    errors: [
      'bad.yaml:6:3: project "1" is also defined at line 3, column 3 (after interpolation); merge the two blocks',
    ],
  },
  {
    name: "unset variable without default, at the reference",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: \${PLUGIN_ID}\n          description: "from \${WHO}"\n`,
    env: { PCSYNC_VAR_PLUGIN_ID: "3" },
    errors: [
      "bad.yaml:8:30: variable WHO is not set; set PCSYNC_VAR_WHO in the environment, pass --var WHO=VALUE or a --var-file, or give a default: ${WHO:-value}",
    ],
  },
  {
    name: "unset variable for a typed field reports only the variable",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: \${PLUGIN_ID}\n`,
    errors: [
      "bad.yaml:7:19: variable PLUGIN_ID is not set; set PCSYNC_VAR_PLUGIN_ID in the environment, pass --var PLUGIN_ID=VALUE or a --var-file, or give a default: ${PLUGIN_ID:-value}",
    ],
  },
  {
    name: "interpolated value of the wrong type",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: \${PLUGIN_ID}\n`,
    env: { PCSYNC_VAR_PLUGIN_ID: "geoip" },
    errors: ['bad.yaml:7:19: "plugin" must be a whole number, got text "geoip"'],
  },
  {
    name: "malformed references",
    yaml: `${HEAD}        - name: "\${1X} and \${A:b}"\n          plugin: 1\n          description: "\${OPEN"\n`,
    errors: [
      /^bad\.yaml:6:18: invalid reference "\$\{1X\}"; write \$\{NAME\} or \$\{NAME:-default\}/,
      'bad.yaml:6:28: invalid reference "${A:b}"; for a default write ${A:-value}',
      /^bad\.yaml:8:25: unclosed `\$\{`/,
    ],
  },
  {
    name: "duplicate YAML key, both positions named",
    yaml: `${HEAD}        - name: GeoIP\n          plugin: 1\n          plugin: 2\n`,
    errors: ['bad.yaml:8:11: duplicate key "plugin" (first at line 7, column 11); remove one of them'],
  },
  {
    name: "tab indentation",
    yaml: "version: 1\nprojects:\n\t'1': {}\n",
    errors: [
      "bad.yaml:3:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
    ],
  },
  {
    // Not the dozen errors the parser trips into down the file.
    name: "one tab in a config: one error",
    yaml: `${HEAD}        - name: GeoIP\n\t        plugin: 1\n        - name: B\n          plugin: 2\n          enabled: true\n        - name: C\n          plugin: 3\n`,
    errors: [
      "bad.yaml:7:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
    ],
  },
  {
    name: "two tabs on one line, after spaces: one error, at the first tab",
    yaml: `${HEAD}        - name: GeoIP\n  \t\t      plugin: 1\n        - name: B\n          plugin: 2\n`,
    errors: [
      "bad.yaml:7:3: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
    ],
  },
  {
    name: "tabs on several lines: one error each, the parser's echoes dropped",
    yaml: `version: 1\nprojects:\n  "1":\n\tplugin_configs:\n      configs:\n        - name: A\n\t  plugin: 1\n\n        # a comment\n        - name: B\n\t\t  plugin: 2\n`,
    errors: [
      "bad.yaml:4:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
      "bad.yaml:7:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
      "bad.yaml:11:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
    ],
  },
  {
    name: "a file indented with tabs throughout: five lines, then one error for the rest",
    yaml: `version: 1\nprojects:\n${Array.from({ length: 4 }, (_, index) => `\t"${index + 1}":\n\t\tplugin_configs:\n\t\t\tconfigs: []\n`).join("")}`,
    errors: [
      "bad.yaml:3:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
      "bad.yaml:4:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
      "bad.yaml:5:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
      "bad.yaml:6:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
      "bad.yaml:7:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
      'bad.yaml:8:1: tabs also indent 7 more lines (8, 9, 10, 11, 12, 13, 14); replace every indenting tab with spaces (an editor\'s "convert indentation to spaces" does it)',
    ],
  },
  {
    // An error before the first tab is not its echo; a tab in a flow collection is allowed.
    name: "an error before a tab is kept, and the tab the parser did not trip on is not blamed",
    yaml: `version: 1\nprojects: [\n  "1":\n\t  plugin_configs: {}\n`,
    errors: [/^bad\.yaml:3:7: Flow sequence in block collection/],
  },
  {
    name: "unclosed quote",
    yaml: 'version: 1\nprojects:\n  "1:\n',
    errors: ['bad.yaml:4:1: Missing closing "quote; close the quote or bracket opened before this point'],
  },
  {
    name: "two documents",
    yaml: "version: 1\n---\nversion: 1\n",
    errors: [/^bad\.yaml:2:1: .*a manifest file holds one YAML document/],
  },
  {
    name: "empty file",
    yaml: "# only a comment\n",
    errors: ["bad.yaml:1:1: file is empty; a manifest starts with `version: 1`"],
  },
  {
    name: "a list at the top",
    yaml: "- version: 1\n",
    errors: ["bad.yaml:1:1: the manifest must be a mapping of keys to values, got a list"],
  },
  {
    name: "configs given as a mapping",
    yaml: 'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        name: GeoIP\n',
    errors: ['bad.yaml:6:9: "configs" must be a list (`- item` lines), got a mapping'],
  },
  {
    name: "base_url that is not http(s)",
    yaml: "version: 1\nserver:\n  base_url: ftp://example.com\n",
    errors: ['bad.yaml:3:13: "base_url" must start with http:// or https://, got text "ftp://example.com"'],
  },
  {
    name: "unknown anchor",
    yaml: "version: 1\nprojects: *nothing\n",
    errors: [/^bad\.yaml:2:11: .*nothing/],
  },
  {
    name: "merge keys are refused",
    yaml: `version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - <<: {plugin: 1}\n          name: A\n`,
    errors: [
      // The missing plugin on the same spot is a consequence, not reported twice.
      "bad.yaml:6:11: YAML merge keys (<<) are not supported; write the keys out, or alias a whole block instead",
    ],
  },
  {
    name: "a duplicate key does not hide the other errors of the file",
    yaml: `${HEAD}        - name: GeoIP\n          name: Other\n          plugin: -1\n`,
    errors: [
      'bad.yaml:7:11: duplicate key "name" (first at line 6, column 11); remove one of them',
      'bad.yaml:8:19: "plugin" must be 1 or more, got -1',
    ],
  },
  {
    name: "several errors of a file in one run",
    yaml: `${HEAD}        - name: A\n          plugin: x\n        - name: A\n          plugin: 2\n          enabld: true\n`,
    errors: [
      'bad.yaml:7:19: "plugin" must be a whole number, got text "x"',
      'bad.yaml:8:17: duplicate name "A" in plugin_configs of project "1" (first at line 6, column 17); a name identifies one config, rename one of them',
      'bad.yaml:10:11: unknown key "enabld"; did you mean "enabled"?',
    ],
  },
];

describe("bad manifests", () => {
  it.each(cases)("$name", ({ yaml, env, errors }) => {
    const result = loadManifestSources(
      [{ file: "bad.yaml", text: yaml }],
      variablesFromEnvironment(env ?? {}),
    );
    const printed = result.errors.map(formatDiagnostic);
    expect(result.value).toBeUndefined();
    expect(printed).toHaveLength(errors.length);
    errors.forEach((expected, index) => {
      if (typeof expected === "string") expect(printed[index]).toBe(expected);
      else expect(printed[index]).toMatch(expected);
    });
  });
});
