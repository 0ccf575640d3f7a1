import { SAVER_KINDS } from "../support/runtime-fixture.js";
import { runFileScopesSuite } from "./file-scopes-suite.js";

for (const saver of SAVER_KINDS) runFileScopesSuite(saver);
