import { html, type Html } from '@plant/shared/page-look';

/** `2026-11-22 05:40 UTC`, in a <time> element with the exact instant. */
export function timeOf(iso: string | null | undefined, empty = 'Never'): Html {
  if (!iso) return html`<span class="muted">${empty}</span>`;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return html`<span class="muted">${empty}</span>`;
  // A narrow column breaks the line between the date and the time only (never after a date's hyphen).
  const day = date.toISOString().slice(0, 10);
  const time = `${date.toISOString().slice(11, 16)}\u00a0UTC`;
  return html`<time datetime="${date.toISOString()}"><span class="nowrap">${day}</span> ${time}</time>`;
}
