import { SAVER_KINDS } from "../support/runtime-fixture.js";
import { runTaskDispatchSuite } from "./task-dispatch-suite.js";

for (const saver of SAVER_KINDS) runTaskDispatchSuite(saver);
