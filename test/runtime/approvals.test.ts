import { SAVER_KINDS } from "../support/runtime-fixture.js";
import { runApprovalsSuite } from "./approvals-suite.js";

for (const saver of SAVER_KINDS) runApprovalsSuite(saver);
