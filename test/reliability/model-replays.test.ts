// The second half of the sequences that found seams between features, replayed on every run beside
// the first (model-based.test.ts): see test/support/model-sequences.ts.

import { replaySequences } from "../support/model-sequences.js";

replaySequences("model-based: the sequences that found seams, replayed (second half)", 1);
