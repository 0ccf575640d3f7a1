/**
 * The full-text index of chunks, on either engine. The one engine-specific part of knowledge
 * bases: SQLite keeps the searchable text in the FTS5 table `kb_chunks_fts` (rowid = chunk id)
 * and ranks with `bm25()`; PostgreSQL keeps it in `kb_chunks.search_text`, derives a `tsvector`
 * column with a GIN index from it and ranks with `ts_rank`. Both receive text segmented by
 * `segmentForSearch` and queries as OR of their words, so they find the same chunks; scores are
 * each engine's own (higher is better) and only order results within one search.
 */

import { type Kysely, sql, type Transaction } from "kysely";
import type { DialectName } from "../store/database.js";
import type { DatabaseSchema } from "../store/schema.js";
import { queryWords, segmentForSearch } from "./segment.js";
import { STOPWORDS } from "./stopwords.js";
import { deleteVectorsWhere } from "./vector-store.js";

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

/** A chunk to index. */
export interface NewChunk {
  kb_id: string;
  file_id: string;
  seq: number;
  line_start: number;
  line_end: number;
  text: string;
}

/** A chunk found by a search, with the engine's score (higher is better). */
export interface ChunkHit {
  id: number;
  kb_id: string;
  file_id: string;
  seq: number;
  line_start: number;
  line_end: number;
  text: string;
  score: number;
}

/** What a search looks in and for. */
export interface ChunkSearch {
  /** The knowledge bases to search (never empty: the caller checked visibility). */
  kbIds: readonly string[];
  /** Only these files, when set. */
  fileIds?: readonly string[] | undefined;
  query: string;
  limit: number;
}

/**
 * Inserts chunks and indexes them, in the caller's transaction.
 * @returns the chunks' ids, in the order of `chunks`.
 */
export async function insertChunks(
  db: Executor,
  dialect: DialectName,
  chunks: readonly NewChunk[],
): Promise<number[]> {
  if (chunks.length === 0) return [];
  if (dialect === "postgres") {
    const inserted = await db
      .insertInto("kb_chunks")
      .values(chunks.map((chunk) => ({ ...chunk, search_text: segmentForSearch(chunk.text) })))
      .returning(["id", "file_id", "seq"])
      .execute();
    // Matched by file and position: PostgreSQL does not promise RETURNING's order.
    const byPlace = new Map(inserted.map((row) => [`${row.file_id}\0${row.seq}`, Number(row.id)]));
    return chunks.map((chunk) => byPlace.get(`${chunk.file_id}\0${chunk.seq}`) ?? -1);
  }
  const ids = await db
    .insertInto("kb_chunks")
    .values([...chunks])
    .returning("id")
    .execute();
  const rows = ids.map(({ id }, index) => {
    const chunk = chunks[index] as NewChunk;
    return sql`(${id}, ${segmentForSearch(chunk.text)}, ${kbToken(chunk.kb_id)})`;
  });
  await sql`insert into kb_chunks_fts (rowid, search_text, kb) values ${sql.join(rows)}`.execute(
    db,
  );
  return ids.map(({ id }) => Number(id));
}

/** Removes the chunks of a knowledge base or of a file, index entries included. */
export async function deleteChunksWhere(
  db: Executor,
  dialect: DialectName,
  where: { kbId: string } | { fileId: string },
): Promise<void> {
  const [column, value] = "kbId" in where ? ["kb_id", where.kbId] : ["file_id", where.fileId];
  await deleteVectorsWhere(db, dialect, where);
  if (dialect === "sqlite") {
    await sql`delete from kb_chunks_fts where rowid in (select id from kb_chunks where ${sql.ref(column)} = ${value})`.execute(
      db,
    );
  }
  await sql`delete from kb_chunks where ${sql.ref(column)} = ${value}`.execute(db);
}

/**
 * The best chunks for `search.query`, best first: any of its words (English function words left
 * out unless nothing else is left), Chinese segmented. Only chunks of `indexed` files: a file
 * being (re)indexed shows nothing until it is whole. No words, no hits.
 */
export async function searchChunks(
  db: Executor,
  dialect: DialectName,
  search: ChunkSearch,
): Promise<ChunkHit[]> {
  const words = significantWords(search.query);
  if (words.length === 0 || search.kbIds.length === 0) return [];
  const kbFilter = sql`c.kb_id in (${sql.join(search.kbIds)})`;
  const fileFilter =
    search.fileIds === undefined
      ? sql`1 = 1`
      : search.fileIds.length === 0
        ? sql`1 = 0`
        : sql`c.file_id in (${sql.join(search.fileIds)})`;
  const columns = sql`c.id, c.kb_id, c.file_id, c.seq, c.line_start, c.line_end, c.text`;
  if (dialect === "postgres") {
    // Words hold letters and digits only, so they cannot carry tsquery syntax.
    const tsquery = words.join(" | ");
    const { rows } = await sql<ChunkHit>`
      select ${columns}, ts_rank(c.tsv, q) as score
      from kb_chunks c
      join kb_files f on f.id = c.file_id and f.status = 'indexed',
      to_tsquery('english', ${tsquery}) q
      where c.tsv @@ q and ${kbFilter} and ${fileFilter}
      order by score desc, c.id
      limit ${search.limit}`.execute(db);
    return rows.map(normaliseHit);
  }
  // Each word quoted: an FTS5 string, never an operator or column filter. The knowledge bases
  // are matched as tokens of the `kb` column, so FTS5 scores only their chunks; `bm25` weighs
  // that column 0. Chunks of files that are not `indexed` (being reindexed) are dropped after
  // ranking, so a few more are ranked than asked for.
  const quoted = (tokens: readonly string[]) =>
    tokens.map((token) => `"${token.replace(/"/g, '""')}"`).join(" OR ");
  const match = `search_text : (${quoted(words)}) AND kb : (${quoted(search.kbIds.map(kbToken))})`;
  const inFiles =
    search.fileIds === undefined
      ? sql`1 = 1`
      : sql`rowid in (select id from kb_chunks c where ${fileFilter})`;
  const { rows } = await sql<ChunkHit>`
    select ${columns}, -h.score as score
    from (
      select rowid as id, bm25(kb_chunks_fts, 1.0, 0.0) as score
      from kb_chunks_fts
      where kb_chunks_fts match ${match} and ${inFiles}
      order by score
      limit ${search.limit + RANKED_SLACK}
    ) h
    join kb_chunks c on c.id = h.id
    join kb_files f on f.id = c.file_id and f.status = 'indexed'
    order by h.score, c.id
    limit ${search.limit}`.execute(db);
  return rows.map(normaliseHit);
}

/** Extra chunks ranked on SQLite, for those of files being reindexed that are then dropped. */
const RANKED_SLACK = 32;

/**
 * The token naming a knowledge base in the FTS5 `kb` column: its id's hex digits between
 * letters, one token for `unicode61`, and ending in "x" so the Porter stemmer leaves it alone.
 */
function kbToken(kbId: string): string {
  return `k${kbId.replace(/[^0-9a-z]/gi, "").toLowerCase()}x`;
}

/** Most words a query is matched by: a pasted page must not become a huge OR expression. */
const MAX_QUERY_WORDS = 64;
/** Longer "words" are noise (PostgreSQL ignores lexemes over 2047 bytes anyway). */
const MAX_WORD_LENGTH = 100;

/** The words a query is matched by (its first {@link MAX_QUERY_WORDS}). */
export function significantWords(query: string): string[] {
  const words = queryWords(query).filter((word) => word.length <= MAX_WORD_LENGTH);
  const kept = words.filter((word) => !STOPWORDS.has(word));
  return (kept.length > 0 ? kept : words).slice(0, MAX_QUERY_WORDS);
}

function normaliseHit(row: ChunkHit): ChunkHit {
  // PostgreSQL's bigserial and real arrive as strings or floats depending on the driver.
  return { ...row, id: Number(row.id), score: Number(row.score) };
}
