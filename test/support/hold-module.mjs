// Preloaded with `node --import` by tests of what happens while pcsync starts: registers
// hold-module-hooks.mjs, which holds the load of the module whose URL ends with
// PCSYNC_TEST_HOLD_MODULE, after writing "held" to PCSYNC_TEST_HOLD_MARKER, for up to 60 s (less
// once the file PCSYNC_TEST_HOLD_RELEASE, if named, exists).

import { register } from "node:module";

register("./hold-module-hooks.mjs", import.meta.url, {
  data: {
    suffix: process.env.PCSYNC_TEST_HOLD_MODULE,
    marker: process.env.PCSYNC_TEST_HOLD_MARKER,
    release: process.env.PCSYNC_TEST_HOLD_RELEASE,
  },
});
