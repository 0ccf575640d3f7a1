import pg from "pg";

/**
 * Like `createTestDatabase`, but the new database sorts text with ICU's `en-US` collation, as
 * production databases created with a language locale do (`"alice"` before `"Bob"`, `"_"`
 * before `"-"`). The test cluster's own default is `C.UTF-8`, which sorts by bytes like SQLite
 * and so would hide any query whose order depends on the collation. Returns its URL.
 */
export async function createIcuTestDatabase(clusterUrl: string, prefix = "icu"): Promise<string> {
  const name = `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: clusterUrl });
  await client.connect();
  try {
    await client.query(
      `CREATE DATABASE "${name}" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`,
    );
  } finally {
    await client.end();
  }
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
