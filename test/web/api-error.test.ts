import { describe, expect, it } from "vitest";
import {
  ApiError,
  errorFromBody,
  errorOfResponse,
  errorOfSdk,
  errorText,
} from "../../web/src/api-error.js";

/** The console's one reading of a failed call (`web/src/api-error.ts`), by fetch or by the SDK. */
describe("the console's API errors", () => {
  const ours = JSON.stringify({
    error: { code: "VALIDATION", message: "name is required", field: "name" },
  });

  it("reads our error body the same way whichever client got it", async () => {
    const viaFetch = await errorOfResponse(new Response(ours, { status: 422 }));
    // The SDK's HTTPError: the status, and the body in its message.
    const viaSdk = errorOfSdk(
      Object.assign(new Error(`HTTP 422: ${ours}`), { status: 422, text: ours }),
    );
    for (const error of [viaFetch, viaSdk]) {
      expect(error).toBeInstanceOf(ApiError);
      expect({ ...error, message: error.message }).toEqual({
        name: "ApiError",
        status: 422,
        code: "VALIDATION",
        message: "name is required",
        field: "name",
      });
    }
  });

  it("keeps what came when the body is not ours", async () => {
    const viaFetch = await errorOfResponse(
      new Response("<h1>Bad gateway</h1>", { status: 502, statusText: "Bad Gateway" }),
    );
    expect([viaFetch.status, viaFetch.code, viaFetch.message]).toEqual([
      502,
      "HTTP_ERROR",
      "502 Bad Gateway <h1>Bad gateway</h1>",
    ]);
    const viaSdk = errorOfSdk(Object.assign(new Error("HTTP 502: upstream"), { status: 502 }));
    expect([viaSdk.status, viaSdk.code, viaSdk.message]).toEqual([
      502,
      "HTTP_ERROR",
      "HTTP 502: upstream",
    ]);
    expect(errorFromBody(500, "null", "fallback").message).toBe("fallback");
    expect(errorFromBody(500, '{"error":{"code":"X"}}', "fallback").code).toBe("HTTP_ERROR");
  });

  it("a failure without a status is the network; an ApiError passes through", () => {
    const network = errorOfSdk(new TypeError("fetch failed"));
    expect([network.status, network.code, network.message]).toEqual([
      0,
      "NETWORK",
      "the server cannot be reached: fetch failed",
    ]);
    const known = new ApiError(409, "THREAD_BUSY", "busy");
    expect(errorOfSdk(known)).toBe(known);
    expect(errorText(known)).toBe("busy");
    expect(errorText("plain")).toBe("plain");
  });
});
