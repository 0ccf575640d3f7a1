import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorCode, messageOf, SubagentGraphError } from "../../errors.js";
import type { Runtime } from "../../runtime.js";
import { idParam } from "../protocol/store-text.js";
import { errorResponses, fileEntrySchema } from "../schemas.js";
import { newThreadId } from "../thread-scope.js";

const threadParams = z.object({ thread_id: idParam() });

/**
 * A thread's files: multipart uploads into its uploads folder (where its agents and their
 * subagents read them), and listing/downloading what they wrote to its outputs.
 */
export function fileRoutes(app: FastifyInstance, runtime: Runtime, maxUploadBytes: number): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    "/threads/:thread_id/files",
    {
      schema: {
        tags: ["files"],
        summary:
          'Upload a file (multipart field "file"; optional field "name" to rename it) into the thread\'s uploads',
        params: threadParams,
        consumes: ["multipart/form-data"],
        response: { 201: fileEntrySchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) {
        throw new SubagentGraphError(
          ErrorCode.Validation,
          'send multipart/form-data with the file in a field named "file"',
          { field: "file" },
        );
      }
      const part = await request
        .file({ limits: { fileSize: maxUploadBytes, files: 1 } })
        .catch(unreadableUpload);
      if (part?.fieldname !== "file") {
        throw new SubagentGraphError(ErrorCode.Validation, 'no field named "file" in the upload', {
          field: "file",
        });
      }
      const content = await part.toBuffer().catch(unreadableUpload);
      if (part.file.truncated) {
        throw new SubagentGraphError(
          ErrorCode.TooLarge,
          `the upload is over the ${maxUploadBytes}-byte limit: send a smaller file`,
          { field: "file" },
        );
      }
      const nameField = part.fields.name;
      const renamed =
        nameField && !Array.isArray(nameField) && nameField.type === "field"
          ? String(nameField.value)
          : undefined;
      // Into the caller's thread by that name, or a new one of theirs (`server/thread-scope.ts`).
      const thread = request.threadRef;
      const threadId =
        thread && !thread.exists
          ? newThreadId(request.uid, thread.external)
          : request.params.thread_id;
      const entry = await runtime.files.upload(
        request.uid,
        threadId,
        renamed || part.filename,
        content,
      );
      return reply.status(201).send(entry);
    },
  );

  routes.get(
    "/threads/:thread_id/files",
    {
      schema: {
        tags: ["files"],
        summary: "List a thread's files (default: its outputs)",
        params: threadParams,
        querystring: z.strictObject({
          folder: z.string().optional().describe("e.g. /home/gem/user-data/uploads"),
        }),
        response: { 200: z.object({ files: z.array(fileEntrySchema) }), ...errorResponses },
      },
    },
    async (request) => ({
      files: await runtime.files.list(request.uid, request.params.thread_id, request.query.folder),
    }),
  );

  routes.get(
    "/threads/:thread_id/files/content",
    {
      schema: {
        tags: ["files"],
        summary: "Download one of a thread's files by virtual path",
        params: threadParams,
        querystring: z.strictObject({ path: z.string().min(1) }),
      },
    },
    async (request, reply) => {
      const bytes = await runtime.files.read(
        request.uid,
        request.params.thread_id,
        request.query.path,
      );
      const name = request.query.path.split("/").pop() ?? "file";
      return reply
        .type("application/octet-stream")
        .header("content-disposition", `attachment; filename*=UTF-8''${encodeURIComponent(name)}`)
        .send(bytes);
    },
  );
}

/**
 * A multipart body the parser could not read: busboy's own errors (no boundary, a body that is
 * not multipart at all, a cut-off part) carry no HTTP status and would read as a 500, so they
 * become a 422 naming the upload. The plugin's errors that do carry one (413 for the limits) are
 * kept.
 */
function unreadableUpload(error: unknown): never {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) throw error;
  const reason = messageOf(error);
  throw new SubagentGraphError(
    ErrorCode.Validation,
    `the multipart body cannot be read (${reason}): send multipart/form-data with its boundary in the content-type and the file in a part named "file"`,
    { field: "file", cause: error },
  );
}
