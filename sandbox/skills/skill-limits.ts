/**
 * Limits on one skill's tree, checked alike when a folder is scanned (`tree-scan.ts`) and when
 * uploaded files are checked (`upload-files.ts`). Skills are instructions plus a few scripts,
 * not data sets.
 */
export const SKILL_LIMITS = {
  /** Regular files. */
  maxFiles: 500,
  /** Folders (bounded separately so a tree of empty folders cannot grow without limit). */
  maxFolders: 500,
  /** Total size of all files, in bytes (20 MiB). */
  maxBytes: 20 * 1024 * 1024,
  /** Length of one file or folder name, in UTF-8 bytes (the usual file system limit). */
  maxNameBytes: 255,
  /** Length of a relative path, in UTF-8 bytes (the usual `PATH_MAX`). */
  maxPathBytes: 4096,
  /** Path segments below the skill folder: `a/b/c` has depth 3. */
  maxDepth: 16,
} as const;
