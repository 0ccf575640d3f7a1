/** Where the console keeps the API token between visits (the browser's local storage). */
export const TOKEN_KEY = "subagent-graph.token";
