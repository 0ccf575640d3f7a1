import { SAVER_KINDS } from "../support/runtime-fixture.js";
import { runAsyncTasksSuite } from "./async-tasks-suite.js";

for (const saver of SAVER_KINDS) runAsyncTasksSuite(saver);
