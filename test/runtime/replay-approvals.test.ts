import { SAVER_KINDS } from "../support/runtime-fixture.js";
import { runReplayApprovalsSuite } from "./replay-approvals-suite.js";

for (const saver of SAVER_KINDS) runReplayApprovalsSuite(saver);
