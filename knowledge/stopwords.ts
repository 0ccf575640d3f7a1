/**
 * English function words left out of search queries. A query is matched as any of its words
 * (OR), so "what", "of" and "the" would rank every chunk that has them; BM25 weighs them low but
 * they still crowd out chunks that match only the words that matter. Never applied to indexed
 * text, and a query made only of such words keeps them.
 */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being " +
    "below between both but by can could did do does doing down during each few for from further " +
    "had has have having he her here hers him his how i if in into is it its itself just me more " +
    "most my no nor not of off on once only or other our out over own same she should so some " +
    "such than that the their them then there these they this those through to too under until " +
    "up very was we were what when where which while who whom why will with would you your"
  ).split(" "),
);
