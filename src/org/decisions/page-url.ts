/** A decision's page on the org origin (`/inbox/decisions/:id`): where its person approves or denies it. */
export function decisionPageUrl(origin: string, decisionId: string): string {
  return `${origin}/inbox/decisions/${encodeURIComponent(decisionId)}`;
}
