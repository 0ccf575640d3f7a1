/**
 * Migration 0010 on SQLite: knowledge base vectors move from one float `vec0` table per length
 * (`kb_vec_<n>`, exact scans) to the layout of `knowledge/sqlite-vectors.ts`: the floats in
 * `kb_vector_floats`, their sign bits in `vec0` tables `kb_vecbit_<n>`. Nothing is embedded
 * again: every stored vector is copied, a knowledge base at a time (memory bounded by the
 * largest one), and the old table dropped. A database without vectors has nothing to move.
 */

import { type Kysely, sql } from "kysely";
import { signBits } from "../util/vector-bits.js";

const OLD_TABLE = /^kb_vec_(\d+)$/;

/** Moves every `kb_vec_<n>` table's vectors into the bit layout, then drops it. */
export async function moveVectorsToBits(db: Kysely<unknown>): Promise<void> {
  const { rows: tables } = await sql<{ name: string }>`
    select name from sqlite_master where type = 'table' and name like 'kb_vec_%'`.execute(db);
  const old = tables.map((row) => row.name).filter((name) => OLD_TABLE.test(name));
  if (old.length === 0) return;
  await sql`create table if not exists kb_vector_floats (chunk_id integer primary key, embedding blob not null)`.execute(
    db,
  );
  for (const name of old) {
    const dimensions = Number(OLD_TABLE.exec(name)?.[1]);
    const bits = Math.ceil(dimensions / 8) * 8;
    const target = `kb_vecbit_${dimensions}`;
    await sql`create virtual table if not exists ${sql.id(target)} using vec0(kb_id text partition key, embedding bit[${sql.raw(String(bits))}], +embedder_key text)`.execute(
      db,
    );
    const { rows: kbs } = await sql<{ kb_id: string }>`
      select distinct kb_id from kb_chunks`.execute(db);
    for (const { kb_id } of kbs) {
      const { rows } = await sql<{ id: number; embedder_key: string; embedding: Uint8Array }>`
        select rowid as id, embedder_key, embedding from ${sql.id(name)} where kb_id = ${kb_id}`.execute(
        db,
      );
      for (let start = 0; start < rows.length; start += 500) {
        const batch = rows.slice(start, start + 500);
        await sql`insert into ${sql.id(target)} (rowid, kb_id, embedder_key, embedding) values ${sql.join(
          batch.map(
            (row) =>
              sql`(${BigInt(row.id)}, ${kb_id}, ${row.embedder_key}, vec_bit(${Buffer.from(signBits(floats(row.embedding)))}))`,
          ),
        )}`.execute(db);
        await sql`insert or replace into kb_vector_floats (chunk_id, embedding) values ${sql.join(
          batch.map((row) => sql`(${Number(row.id)}, ${Buffer.from(row.embedding)})`),
        )}`.execute(db);
      }
    }
    await sql`drop table ${sql.id(name)}`.execute(db);
  }
}

function floats(blob: Uint8Array): Float32Array {
  return new Float32Array(new Uint8Array(blob).buffer);
}
