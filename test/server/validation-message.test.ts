import type { FastifyRequest } from "fastify";
import { describe, expect, it } from "vitest";
import { describeValidation, type SchemaIssue } from "../../server/validation-message.js";

/**
 * The refusal of a request its schema failed, from the issues `fastify-type-provider-zod` hands
 * over: what no route of ours can show yet (a failing field named like a secret), and keys
 * the dotted form cannot write bare.
 */

const typeIssue = (path: string, expected: string): SchemaIssue => ({
  keyword: "invalid_type",
  instancePath: path,
  message: `Invalid input: expected ${expected}, received number`,
  params: { expected },
});
const bodyOf = (body: unknown) => ({ body }) as FastifyRequest;

describe("describeValidation", () => {
  it("never repeats the value of a field whose name suggests a secret", () => {
    for (const [path, body] of [
      ["/api_key", { api_key: 424242 }],
      ["/config/auth_token", { config: { auth_token: 424242 } }],
      ["/password", { password: 424242 }],
    ] as const) {
      const refusal = describeValidation([typeIssue(path, "string")], "body", bodyOf(body));
      expect(refusal.message, path).not.toContain("424242");
      expect(refusal.message, path).toContain("the value sent is not valid: send a string");
    }
    // The same value under a plain name is shown.
    const plain = describeValidation(
      [typeIssue("/limit", "string")],
      "body",
      bodyOf({ limit: 424242 }),
    );
    expect(plain).toEqual({ field: "limit", message: "limit: 424242 is not valid: send a string" });
  });

  it("writes list indexes and odd keys in the API's dotted form", () => {
    const listed = describeValidation(
      [typeIssue("/metadata/a/0", "string")],
      "body",
      bodyOf({ metadata: { a: [7] } }),
    );
    expect(listed.field).toBe("metadata.a[0]");
    // An object key made of digits stays a key.
    const digits = describeValidation(
      [typeIssue("/metadata/0", "string")],
      "body",
      bodyOf({ metadata: { "0": 7 } }),
    );
    expect(digits.field).toBe('metadata["0"]');
    const spaced = describeValidation(
      [typeIssue("/values/a b", "string")],
      "body",
      bodyOf({ values: { "a b": 7 } }),
    );
    // The type provider joins the path with "/": a key holding one is found whole again.
    const slashed = describeValidation(
      [typeIssue("/metadata/a/b", "string")],
      "body",
      bodyOf({ metadata: { "a/b": 7 } }),
    );
    expect(slashed).toEqual({
      field: 'metadata["a/b"]',
      message: 'metadata["a/b"]: 7 is not valid: send a string',
    });
    expect(spaced).toEqual({
      field: 'values["a b"]',
      message: 'values["a b"]: 7 is not valid: send a string',
    });
  });
});
