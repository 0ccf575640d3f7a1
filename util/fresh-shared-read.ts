/**
 * Concurrent callers of an asynchronous read share its queries, and none gets an answer older
 * than its call: a caller never joins a query already sent (its snapshot may predate the
 * caller's call, and miss a write committed just before it); it joins the next one, sent as
 * soon as the one in flight returns. Under load that is at most two queries at a time however
 * many callers wait; a lone caller's query is sent at once, as without sharing.
 */
export function freshSharedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const send = (): Promise<T> => {
    const sent = read();
    inFlight = sent;
    const settle = () => {
      if (inFlight === sent) inFlight = undefined;
    };
    sent.then(settle, settle);
    return sent;
  };
  return () => {
    if (inFlight === undefined) return send();
    next ??= inFlight
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        next = undefined;
        return send();
      });
    return next;
  };
}
