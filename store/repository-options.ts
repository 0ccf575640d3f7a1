/** Options every repository accepts. */
export interface RepositoryOptions {
  /**
   * The current time; defaults to `new Date()`. Injectable so tests can order records and
   * check timestamps without sleeping.
   */
  now?: () => Date;
}

/** The clock a repository uses for `options`. */
export function clockOf(options: RepositoryOptions): () => Date {
  return options.now ?? (() => new Date());
}
