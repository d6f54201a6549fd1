/** A timestamp for people: `2026-03-04 10:30:00 UTC`, or a dash when there is none. */
export function formatTime(value: string | null | undefined): string {
  if (!value) return '—';
  return new Date(value).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}
