import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "../../store/database-unavailable.js";

/** An Error with node-postgres's or Node's `code`. */
const coded = (code: string, message = "failed") => Object.assign(new Error(message), { code });

describe("isDatabaseUnavailable", () => {
  it("knows a database that cannot be reached from a statement that was wrong", () => {
    for (const unreachable of [
      coded("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432"),
      coded("57P01", "terminating connection due to administrator command"),
      coded("08006", "connection failure"),
      coded("53300", "sorry, too many clients already"),
      new Error("timeout exceeded when trying to connect"),
      new Error("Connection terminated unexpectedly"),
    ]) {
      expect(isDatabaseUnavailable(unreachable), unreachable.message).toBe(true);
    }
    for (const wrong of [
      coded("23505", "duplicate key value violates unique constraint"),
      coded("42601", "syntax error at or near"),
      coded("22021", 'invalid byte sequence for encoding "UTF8": 0x00'),
      new Error("something else"),
      "ECONNREFUSED",
      undefined,
    ]) {
      expect(isDatabaseUnavailable(wrong), String(wrong)).toBe(false);
    }
  });

  it("follows the causes of a wrapped error", () => {
    const wrapped = new Error("reading the thread failed", {
      cause: new Error("query failed", { cause: coded("ECONNRESET") }),
    });
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
  });
});
