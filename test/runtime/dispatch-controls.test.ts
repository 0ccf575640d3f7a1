import { SAVER_KINDS } from "../support/runtime-fixture.js";
import { runDispatchControlsSuite } from "./dispatch-controls-suite.js";

for (const saver of SAVER_KINDS) runDispatchControlsSuite(saver);
