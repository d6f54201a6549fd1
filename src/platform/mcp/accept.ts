/**
 * How a POST is answered, chosen from its Accept header. 2025-03-26 transport spec: a POST carrying requests is
 * answered either with one `application/json` body or with a `text/event-stream`; the client lists both. The
 * SDK transport insists on both being listed and always streams unless told otherwise, so we decide here and
 * hand it a normalised header:
 *
 * - JSON when `application/json` is acceptable (our tools emit no progress messages, so a stream adds
 *   nothing but framing), unless `text/event-stream` carries a strictly higher q-value;
 * - an SSE stream when only `text/event-stream` is acceptable, or it is preferred;
 * - 406 when neither is (RFC 9110 §12.5.1). No Accept header means anything is acceptable.
 */
export type ResponseMode = 'json' | 'sse';

export function chooseResponseMode(accept: string | undefined): ResponseMode | undefined {
  if (!accept || !accept.trim()) return 'json';
  const json = qualityOf(accept, 'application', 'json');
  const sse = qualityOf(accept, 'text', 'event-stream');
  if (json === 0 && sse === 0) return undefined;
  return sse > json ? 'sse' : 'json';
}

/** The q-value the header gives a media type: its most specific matching range wins (RFC 9110 §12.5.1). */
function qualityOf(accept: string, type: string, subtype: string): number {
  let best = { specificity: -1, q: 0 };
  for (const part of accept.split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const [rangeType, rangeSubtype] = range.trim().split('/');
    let specificity: number;
    if (rangeType === type && rangeSubtype === subtype) specificity = 2;
    else if (rangeType === type && rangeSubtype === '*') specificity = 1;
    else if (rangeType === '*' && rangeSubtype === '*') specificity = 0;
    else continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (specificity > best.specificity) best = { specificity, q: Number.isFinite(q) ? q : 0 };
  }
  return best.q;
}
