/**
 * The console's one reading of a failed call. Our server answers every error as
 * `{ error: { code, message, field? } }` (`server/http-errors.ts`); a call made with `fetch` and
 * one made through the SDK's client both end in {@link errorFromBody}. No DOM here: unit-tested
 * in Node (`test/web/api-error.test.ts`).
 */

/** An error answer of the API (`{ error: { code, message, field? } }`), or a network failure. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** Our error body, as far as it can be trusted before it is read. */
interface ErrorBody {
  error?: { code?: string; message?: string; field?: string };
}

/**
 * The error an answer with `status` and body `body` stands for: ours when the body is our error
 * shape, else `fallback` (a message made of what came) with the code `HTTP_ERROR`.
 */
export function errorFromBody(status: number, body: string, fallback: string): ApiError {
  try {
    const parsed = JSON.parse(body) as ErrorBody | null;
    if (parsed?.error?.message) {
      return new ApiError(
        status,
        parsed.error.code ?? "ERROR",
        parsed.error.message,
        parsed.error.field,
      );
    }
  } catch {
    // Not our error shape (a proxy's page, an empty body): the fallback says what came.
  }
  return new ApiError(status, "HTTP_ERROR", fallback);
}

/** A request that got no answer at all (the server is down, or the network is). */
export function networkError(message: string): ApiError {
  return new ApiError(0, "NETWORK", `the server cannot be reached: ${message}`);
}

/** A `fetch` answer that is not ok, as an {@link ApiError}. */
export async function errorOfResponse(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  return errorFromBody(
    response.status,
    text,
    `${response.status} ${response.statusText} ${text}`.trim(),
  );
}

/**
 * An SDK failure as an {@link ApiError}: the SDK's `HTTPError` carries the status, and the body in
 * its message after `HTTP <status>: `; anything without a status is the network.
 */
export function errorOfSdk(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const failure = error as { status?: unknown; message?: unknown } | undefined;
  const message = typeof failure?.message === "string" ? failure.message : String(error);
  if (typeof failure?.status !== "number") return networkError(message);
  return errorFromBody(failure.status, message.replace(/^HTTP \d+: /, ""), message);
}

/** What a failure says: an error's message, or the thrown value as text. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
