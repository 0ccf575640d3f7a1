import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorCode, messageOf, SubagentGraphError } from "../../errors.js";
import { kbCreateSchema, kbUpdateSchema } from "../../knowledge/schema.js";
import type { KbUpload } from "../../knowledge/service.js";
import type { Runtime } from "../../runtime.js";
import { documentBodyOnly } from "../protocol/document-body-only.js";
import {
  kbErrorResponses,
  kbFileSchema,
  kbReadSchema,
  kbSearchBodySchema,
  kbSearchHitSchema,
  kbUploadResultSchema,
  knowledgeBaseSchema,
} from "../protocol/knowledge.js";
import { idParam } from "../protocol/store-text.js";

const kbParams = z.strictObject({ kb: idParam().describe("knowledge base id or name") });
const fileParams = z.strictObject({ kb: idParam(), file_id: idParam() });
/** Files one upload request may carry. */
const MAX_FILES_PER_UPLOAD = 100;

/**
 * `/api/kb`: knowledge bases with the agents' sharing rules (invisible → 404, visible but not
 * editable → 403), multipart uploads answered 202 with each file's status (indexing goes on in
 * the background; poll the file list), file listing and deletion, search and line reads.
 */
export function knowledgeRoutes(
  app: FastifyInstance,
  runtime: Runtime,
  maxUploadBytes: number,
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["knowledge"];

  routes.get(
    "/api/kb",
    {
      schema: {
        tags,
        summary: "List the knowledge bases you may see",
        response: {
          200: z.object({ knowledge_bases: z.array(knowledgeBaseSchema) }),
          ...kbErrorResponses,
        },
      },
    },
    async (request) => ({ knowledge_bases: await runtime.kb.list(request.uid) }),
  );

  routes.post(
    "/api/kb",
    {
      schema: {
        tags,
        summary: "Create a knowledge base",
        body: kbCreateSchema,
        response: { 201: knowledgeBaseSchema, ...kbErrorResponses },
      },
      validatorCompiler: documentBodyOnly,
    },
    async (request, reply) =>
      reply.status(201).send(await runtime.kb.create(request.uid, request.body)),
  );

  routes.post(
    "/api/kb/search",
    {
      schema: {
        tags,
        summary: "Search knowledge bases you may see (all, or those named)",
        body: kbSearchBodySchema,
        response: { 200: z.object({ results: z.array(kbSearchHitSchema) }), ...kbErrorResponses },
      },
    },
    async (request) => ({ results: await runtime.kb.search(request.uid, request.body) }),
  );

  routes.get(
    "/api/kb/:kb",
    {
      schema: {
        tags,
        summary: "Get a knowledge base",
        params: kbParams,
        response: { 200: knowledgeBaseSchema, ...kbErrorResponses },
      },
    },
    async (request) => runtime.kb.get(request.uid, request.params.kb),
  );

  routes.put(
    "/api/kb/:kb",
    {
      schema: {
        tags,
        summary: "Update a knowledge base (owner and editors); bumps its version",
        params: kbParams,
        body: kbUpdateSchema,
        response: { 200: knowledgeBaseSchema, ...kbErrorResponses },
      },
      validatorCompiler: documentBodyOnly,
    },
    async (request) => runtime.kb.update(request.uid, request.params.kb, request.body),
  );

  routes.delete(
    "/api/kb/:kb",
    {
      schema: {
        tags,
        summary: "Delete a knowledge base with its files (owner and editors)",
        params: kbParams,
        response: { 204: z.null().describe("deleted"), ...kbErrorResponses },
      },
    },
    async (request, reply) => {
      await runtime.kb.delete(request.uid, request.params.kb);
      return reply.status(204).send(null);
    },
  );

  routes.post(
    "/api/kb/:kb/files",
    {
      schema: {
        tags,
        summary:
          'Upload files (multipart, each in a part named "file"): 202 with each file\'s status, indexed in the background. A request whose every file is refused answers that refusal (413, 415, 422)',
        params: kbParams,
        consumes: ["multipart/form-data"],
        response: { 202: z.object({ files: z.array(kbUploadResultSchema) }), ...kbErrorResponses },
      },
    },
    async (request, reply) => {
      // Visibility and edit rights first: nothing is read from a refused upload.
      await runtime.kb.get(request.uid, request.params.kb);
      const uploads = await readUploads(request, maxUploadBytes);
      const results = await runtime.kb.addFiles(request.uid, request.params.kb, uploads);
      const firstRefusal = results.find((result) => result.status === "rejected");
      if (firstRefusal && results.every((result) => result.status === "rejected")) {
        throw new SubagentGraphError(firstRefusal.error.code, firstRefusal.error.message, {
          field: "file",
        });
      }
      return reply.status(202).send({ files: results });
    },
  );

  routes.get(
    "/api/kb/:kb/files",
    {
      schema: {
        tags,
        summary: "List a knowledge base's files with their ingest status",
        params: kbParams,
        response: { 200: z.object({ files: z.array(kbFileSchema) }), ...kbErrorResponses },
      },
    },
    async (request) => ({ files: await runtime.kb.listFiles(request.uid, request.params.kb) }),
  );

  routes.get(
    "/api/kb/:kb/files/:file_id",
    {
      schema: {
        tags,
        summary: "One file with its ingest status",
        params: fileParams,
        response: { 200: kbFileSchema, ...kbErrorResponses },
      },
    },
    async (request) => runtime.kb.getFile(request.uid, request.params.kb, request.params.file_id),
  );

  routes.get(
    "/api/kb/:kb/files/:file_id/lines",
    {
      schema: {
        tags,
        summary: "A numbered window of an indexed file's text",
        params: fileParams,
        querystring: z.strictObject({
          line: z.coerce.number().int().positive().optional(),
          lines: z.coerce.number().int().positive().optional(),
        }),
        response: { 200: kbReadSchema, ...kbErrorResponses },
      },
    },
    async (request) =>
      runtime.kb.read(request.uid, request.params.kb, request.params.file_id, {
        ...(request.query.line === undefined ? {} : { line: request.query.line }),
        ...(request.query.lines === undefined ? {} : { lines: request.query.lines }),
      }),
  );

  routes.delete(
    "/api/kb/:kb/files/:file_id",
    {
      schema: {
        tags,
        summary: "Delete a file and its chunks (owner and editors)",
        params: fileParams,
        response: { 204: z.null().describe("deleted"), ...kbErrorResponses },
      },
    },
    async (request, reply) => {
      await runtime.kb.deleteFile(request.uid, request.params.kb, request.params.file_id);
      return reply.status(204).send(null);
    },
  );
}

/** The files of a multipart upload, in order; other fields are ignored. */
async function readUploads(request: FastifyRequest, maxBytes: number): Promise<KbUpload[]> {
  if (!request.isMultipart()) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      'send multipart/form-data with each file in a part named "file"',
      { field: "file" },
    );
  }
  const uploads: KbUpload[] = [];
  try {
    for await (const part of request.parts({
      limits: { fileSize: maxBytes, files: MAX_FILES_PER_UPLOAD },
    })) {
      if (part.type !== "file") continue;
      const content = await part.toBuffer();
      uploads.push({ name: part.filename, content });
    }
  } catch (error) {
    throw unreadableUpload(error, maxBytes);
  }
  if (uploads.length === 0) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      'no file in the upload: add a part named "file"',
      {
        field: "file",
      },
    );
  }
  return uploads;
}

/** A multipart body that cannot be read, as a typed 4xx naming the limit or the problem. */
function unreadableUpload(error: unknown, maxBytes: number): SubagentGraphError {
  const code = Reflect.get(Object(error), "code");
  if (code === "FST_REQ_FILE_TOO_LARGE") {
    return new SubagentGraphError(
      ErrorCode.TooLarge,
      `a file of the upload is over the ${maxBytes}-byte limit: split it or send a smaller one`,
      { field: "file", cause: error },
    );
  }
  if (code === "FST_FILES_LIMIT") {
    return new SubagentGraphError(
      ErrorCode.TooLarge,
      `the upload has more than ${MAX_FILES_PER_UPLOAD} files: send them in several requests`,
      { field: "file", cause: error },
    );
  }
  const reason = messageOf(error);
  return new SubagentGraphError(
    ErrorCode.Validation,
    `the multipart body cannot be read (${reason}): send multipart/form-data with its boundary in the content-type and each file in a part named "file"`,
    { field: "file", cause: error },
  );
}
