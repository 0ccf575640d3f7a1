import { SAVER_KINDS } from "../support/runtime-fixture.js";
import { runThreadDeleteSuite } from "./thread-delete-suite.js";

for (const saver of SAVER_KINDS) runThreadDeleteSuite(saver);
