import { useState } from "preact/hooks";
import type { Api } from "../api.js";
import { formatScore, type KbSearchHit, lineSpan } from "../kb-model.js";
import { MarkdownText } from "./markdown-text.js";

/** Hits one search shows. */
const TOP_K = 10;

/**
 * Searches one knowledge base as its agents would (`kb_search`): each hit with its file, lines,
 * score and text. The text is the documents' own, so it is rendered as sanitised markdown
 * (`markdown.ts`), never as raw HTML. The server's refusal (an empty query, say) is shown under
 * the search box.
 */
export function KbSearch(props: { api: Api; kbId: string }) {
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<{ query: string; results: KbSearchHit[] } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const search = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const results = await props.api.searchKnowledgeBase(props.kbId, query, TOP_K);
      setHits({ query, results });
    } catch (caught) {
      setHits(undefined);
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="kb-search" aria-labelledby="kb-search-title">
      <h2 id="kb-search-title">Search</h2>
      <form class="search-form" aria-label="Knowledge base search" onSubmit={search}>
        <div class="field">
          <label for="kb-query">Search this knowledge base</label>
          <input
            id="kb-query"
            type="search"
            value={query}
            aria-invalid={error ? "true" : undefined}
            aria-describedby={error ? "kb-query-error" : undefined}
            onInput={(event) => setQuery((event.target as HTMLInputElement).value)}
          />
          {error && (
            <p id="kb-query-error" role="alert" class="field-error">
              {error}
            </p>
          )}
        </div>
        <button type="submit" class="search-submit" disabled={busy}>
          {busy ? "Searching…" : "Search"}
        </button>
      </form>
      {hits && (
        <div aria-live="polite">
          {hits.results.length === 0 ? (
            <p class="hint">Nothing found for "{hits.query}" (only indexed files are searched).</p>
          ) : (
            <ol class="kb-hits" aria-label={`Hits for ${hits.query}`}>
              {hits.results.map((hit) => (
                <li
                  key={`${hit.file_id}:${hit.line_start}`}
                  data-hit-file={hit.file}
                  data-hit-line={hit.line_start}
                >
                  <div class="hit-head">
                    <strong>{hit.file}</strong> <span class="hit-lines">{lineSpan(hit)}</span>{" "}
                    <span class="muted">score {formatScore(hit.score)}</span>
                  </div>
                  <MarkdownText text={hit.text} />
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}
