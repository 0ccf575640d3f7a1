import { SAVER_KINDS } from "../support/runtime-fixture.js";
import { runReplaySuite } from "./replay-suite.js";

for (const saver of SAVER_KINDS) runReplaySuite(saver);
