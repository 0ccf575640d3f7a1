import { openSqliteDatabase } from "../../store/database.js";
import { runThreadStoreSuite } from "./threads-suite.js";

runThreadStoreSuite("sqlite", () => openSqliteDatabase(":memory:"));
