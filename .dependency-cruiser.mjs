// The import-direction check (`npm run layers`, part of `npm test`): the floors of
// ARCHITECTURE.md as dependency-cruiser rules. A file may import its own floor and the floors
// below it, never a floor above. Type-only imports count (`tsPreCompilationDeps`). There is no
// exception list: a violation is fixed by moving code down a floor (or passing it in), never by
// an entry here. `test/` is not checked: tests may reach any floor.

/** The floors, lowest first: top-level folders and top-level files of each. */
const FLOORS = [
  {
    name: "leaf",
    folders: ["util"],
    files: ["errors.ts", "run-context.ts", "contract.ts"],
    holds: "errors, the typed run context, the stream contract, small helpers",
  },
  {
    name: "domain",
    folders: ["agents", "store", "sandbox", "tools", "checkpoints", "models", "knowledge"],
    files: [],
    holds: "records and rules, repositories, scopes and file tools, tools and MCP, savers, models",
  },
  {
    name: "blocks",
    folders: ["backends", "middleware"],
    files: [],
    holds: "the blocks an agent graph is built of: agent backends and LangChain middleware",
  },
  { name: "graphs", folders: ["graphs"], files: [], holds: "agent graphs and their cache" },
  {
    name: "threads",
    folders: ["threads"],
    files: [],
    holds: "thread and child-thread reads, forks, approvals, deletion, the files API, recording",
  },
  {
    name: "runs",
    folders: ["runs"],
    files: [],
    holds: "a run's lifecycle, lease, events, repair, the runs of this process, background tasks",
  },
  {
    name: "library",
    folders: [],
    files: ["index.ts", "testing.ts", "runtime.ts", "runtime-types.ts"],
    holds: "the public API and the runtime that assembles the parts",
  },
  {
    name: "entry",
    folders: ["cli", "server", "web", "bench"],
    files: ["studio.ts"],
    holds: "CLI, HTTP server, web console, benchmarks, the Studio entry",
  },
];

const literal = (text) => text.replace(/[.]/g, "\\.");

/** A path pattern matching everything on the given floors. */
function pathOf(floors) {
  const parts = floors.flatMap((floor) => [
    ...floor.folders.map((folder) => `${folder}/`),
    ...floor.files.map((file) => `${literal(file)}$`),
  ]);
  return `^(${parts.join("|")})`;
}

/** One rule per floor: it imports nothing from any floor above it. */
const floorRules = FLOORS.slice(0, -1).map((floor, index) => {
  const above = FLOORS.slice(index + 1);
  return {
    name: `${floor.name}-imports-no-higher-floor`,
    severity: "error",
    comment: `The ${floor.name} floor (${floor.holds}) may not import ${above.map((f) => f.name).join(", ")}: imports point down the floors (ARCHITECTURE.md). Move what both need down to the lower floor, or pass it in.`,
    from: { path: pathOf([floor]) },
    to: { path: pathOf(above) },
  };
});

/**
 * Sibling folders of one floor may import each other one way only: a loop of imports between
 * them (e.g. `store/` → `checkpoints/` → `store/`) is one concern split in two. Folders count
 * with their subfolders. An upward import closes such loops too (`agents/` → `util/` → `runs/` →
 * `agents/`), so they are listed beside its floor violation and go away with it.
 */
const siblingRules = FLOORS.filter((floor) => floor.folders.length > 1).map((floor) => {
  const any = `^(${floor.folders.join("|")})(/|$)`;
  return {
    name: `${floor.name}-folders-not-circular`,
    severity: "error",
    comment: `Folders of the ${floor.name} floor (${floor.folders.join(", ")}) may import each other one way only: a loop between two of them is one concern split in two. Move the shared part into one of them, or down a floor. The imports that close it: grep -rn 'from "\\.\\./<next folder>/' <folder>/ for each step.`,
    scope: "folder",
    from: { path: any },
    to: { path: any, pathNot: "^$1(/|$)", circular: true },
  };
});

/** Floors inside `server/`, lowest first: its helpers, the wire protocol, live runs, the thread protocol, routes, the app. */
const SERVER_FLOORS = [
  { name: "server helpers", path: "^server/(?!app\\.ts$)[^/]+\\.ts$" },
  { name: "server/protocol", path: "^server/protocol/" },
  { name: "server/live-runs", path: "^server/live-runs/" },
  { name: "server/thread-protocol", path: "^server/thread-protocol/" },
  { name: "server/routes", path: "^server/routes/" },
  { name: "server/app.ts", path: "^server/app\\.ts$" },
];

const serverRules = SERVER_FLOORS.slice(0, -1).map((floor, index) => {
  const above = SERVER_FLOORS.slice(index + 1);
  return {
    name: `${floor.name.replace(/[/. ]/g, "-")}-imports-no-higher-server-floor`,
    severity: "error",
    comment: `Inside server/, ${floor.name} may not import ${above.map((f) => f.name).join(", ")} (ARCHITECTURE.md, "server/").`,
    from: { path: floor.path },
    to: { path: above.map((f) => f.path).join("|") },
  };
});

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    ...floorRules,
    {
      name: "errors-imports-nothing",
      severity: "error",
      comment:
        "errors.ts imports nothing of ours, so every file, however low, can throw a typed error.",
      from: { path: "^errors\\.ts$" },
      to: { pathNot: "node_modules", dependencyTypesNot: ["core"] },
    },
    {
      name: "contract-imports-nothing",
      severity: "error",
      comment:
        "contract.ts imports nothing, so every door (the browser console too) reads the names it defines.",
      from: { path: "^contract\\.ts$" },
      to: { pathNot: "node_modules", dependencyTypesNot: ["core"] },
    },
    {
      name: "leaf-parts-apart",
      severity: "error",
      comment:
        "util/ and run-context.ts are separate leaves: each may import errors.ts, neither the other.",
      from: { path: "^(util/|run-context\\.ts$)" },
      to: { path: "^(util/|run-context\\.ts$)", pathNot: "^$1" },
    },
    {
      name: "backends-and-middleware-apart",
      severity: "error",
      comment:
        "backends/ and middleware/ are siblings that never import each other: graphs/ composes them (the task middleware builds children through a factory it is handed).",
      from: { path: "^(backends|middleware)/" },
      to: { path: "^(backends|middleware)/", pathNot: "^$1/" },
    },
    ...siblingRules,
    ...serverRules,
    {
      name: "no-cycles",
      severity: "error",
      comment:
        "No import cycles, type-only imports included (the cycles script checks value imports).",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      comment: "An import that cannot be resolved cannot be checked either.",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Unanchored: a linked or hoisted install resolves outside the tree and is still a package.
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|test|dist|web/dist|\\.tmp|coverage)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      extensions: [".ts", ".tsx", ".js", ".mjs", ".json"],
      // Packages that only declare "exports" (vite, the MCP SDK) resolve as Node resolves them.
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
  },
};
