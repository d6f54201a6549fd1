// An enhancement only: every page works without it. Keeps the inbox count in the navigation current by
// asking /inbox/count every 30 seconds while the page is visible.
const count = document.querySelector('[data-pending-count]');
if (count) {
  const refresh = async () => {
    if (document.visibilityState !== 'visible') return;
    try {
      const response = await fetch('/inbox/count', { headers: { accept: 'application/json' }, credentials: 'same-origin' });
      if (!response.ok) return;
      const { pending } = await response.json();
      if (typeof pending !== 'number') return;
      // The count's first child is the number; the words after it (" pending") are for screen readers.
      count.firstChild.nodeValue = String(pending);
      count.hidden = pending === 0;
    } catch {
      // Offline or signed out: keep what the page showed.
    }
  };
  setInterval(refresh, 30_000);
  document.addEventListener('visibilitychange', refresh);
}
