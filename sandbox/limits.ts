/** Bounds of the file tools: what one call may read, write, list or search. */
export interface FileToolLimits {
  /** Largest file `read_file` and `edit_file` open. */
  maxReadBytes: number;
  /** Largest content `write_file` and `edit_file` write, and the largest upload. */
  maxWriteBytes: number;
  /** Lines `read_file` returns when no `limit` is given (and the most it ever returns). */
  readLines: number;
  /** Characters of one line shown by `read_file` and `grep` (the rest is cut, with a marker). */
  lineChars: number;
  /** Entries `ls` shows. */
  listEntries: number;
  /** Paths `glob` returns. */
  globResults: number;
  /** Folder depth `glob` and `grep` descend. */
  searchDepth: number;
  /** Matching lines `grep` returns. */
  grepMatches: number;
  /** Files `grep` opens; larger files than `grepFileBytes` are skipped and counted. */
  grepFiles: number;
  grepFileBytes: number;
  /** Wall time of one `glob` or `grep` walk, after which it reports what it found so far. */
  searchMillis: number;
}

export const DEFAULT_FILE_TOOL_LIMITS: FileToolLimits = {
  maxReadBytes: 10 * 1024 * 1024,
  maxWriteBytes: 10 * 1024 * 1024,
  readLines: 2000,
  lineChars: 2000,
  listEntries: 500,
  globResults: 500,
  searchDepth: 24,
  grepMatches: 200,
  grepFiles: 5000,
  grepFileBytes: 4 * 1024 * 1024,
  searchMillis: 15_000,
};
