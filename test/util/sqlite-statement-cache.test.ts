import SQLite from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { withStatementCache } from "../../util/sqlite-statement-cache.js";

describe("withStatementCache", () => {
  let raw: SQLite.Database | undefined;
  afterEach(() => {
    if (raw?.open) raw.close();
  });

  function open(size?: number): SQLite.Database {
    raw = new SQLite(":memory:");
    raw.exec("create table items (id integer primary key, name text)");
    return withStatementCache(raw, size);
  }

  it("compiles each SQL text once and hands the same statement back", () => {
    const db = open();
    const insert = db.prepare("insert into items (name) values (?)");
    expect(db.prepare("insert into items (name) values (?)")).toBe(insert);
    insert.run("a");
    db.prepare("insert into items (name) values (?)").run("b");
    const names = db.prepare("select name from items order by id").all();
    expect(names).toEqual([{ name: "a" }, { name: "b" }]);
    expect(db.prepare("select name from items where id = ?")).not.toBe(
      db.prepare("select name from items order by id"),
    );
  });

  it("gives a fresh statement while the cached one is still iterating", () => {
    const db = open();
    db.prepare("insert into items (name) values (?)").run("a");
    db.prepare("insert into items (name) values (?)").run("b");
    const select = "select name from items order by id";
    const seen: string[] = [];
    for (const row of db.prepare(select).iterate() as Iterable<{ name: string }>) {
      // Without the busy check this would be the iterating statement, and better-sqlite3
      // refuses to run a statement that is busy.
      const again = db.prepare(select).all() as { name: string }[];
      seen.push(`${row.name}:${again.length}`);
    }
    expect(seen).toEqual(["a:2", "b:2"]);
  });

  it("keeps at most `size` statements, dropping the least recently used", () => {
    const db = open(2);
    const first = db.prepare("select 1");
    const second = db.prepare("select 2");
    expect(db.prepare("select 1")).toBe(first); // now the most recently used
    db.prepare("select 3"); // evicts "select 2"
    expect(db.prepare("select 1")).toBe(first);
    expect(db.prepare("select 2")).not.toBe(second);
  });

  it("leaves the connection's other methods working on the real connection", () => {
    const db = open();
    const insertMany = db.transaction((names: string[]) => {
      for (const name of names) db.prepare("insert into items (name) values (?)").run(name);
    });
    insertMany(["a", "b", "c"]);
    expect(db.prepare("select count(*) as n from items").get()).toEqual({ n: 3 });
    expect(() =>
      db.transaction(() => {
        db.prepare("insert into items (name) values (?)").run("d");
        throw new Error("roll back");
      })(),
    ).toThrow("roll back");
    expect(db.prepare("select count(*) as n from items").get()).toEqual({ n: 3 });
    expect(db.open).toBe(true);
    db.close();
    expect(raw?.open).toBe(false);
  });
});
