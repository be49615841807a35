/**
 * The one stylesheet of every page a person sees: the portal's (account-admin) and the token
 * service's sign-in and error pages, so signing in does not look like another product. System
 * fonts, a calm palette, visible focus, and a table that becomes cards on narrow screens. A
 * string module rather than a file, so it is inside every service's build (and image) with no
 * copy step; each service serves it itself (`stylesheetRoute`).
 *
 * One component set, so every page reads alike:
 * - page header: `.breadcrumb` (where the page sits) above `.page-head` (h1, a `.muted` lead,
 *   and the page's own actions on the right);
 * - buttons, one hierarchy: `.button-primary` (the one thing the page, form or dialog is for),
 *   `.button` (everything else), `.button-danger` (destructive, asks first) and
 *   `.button-danger-solid` (the confirmation of a destructive act), `.button-quiet` (sign out);
 *   `.button-small` inside tables and card heads; a form's buttons sit in `.form-actions`,
 *   never stretched to the form's width;
 * - every control (text, email, password, url, number, select, textarea, checkbox, radio) has
 *   the same border, radius, padding and focus ring.
 * Nothing may make a page wider than the window at 360 px and up: long names, emails, ids and
 * URLs break anywhere, and tables become labelled cards below 960 px.
 */
export const STYLESHEET = `:root {
  --bg: #f6f7f5;
  --surface: #ffffff;
  --text: #1d2520;
  --muted: #5b665f;
  --line: #dfe4e0;
  --brand: #2f6f4e;
  --brand-strong: #24573d;
  --brand-soft: #e5f1ea;
  --danger: #b3261e;
  --danger-soft: #fbe9e7;
  --warn-soft: #fff4d6;
  --warn-line: #e7c35a;
  --info-soft: #e8f0fb;
  --radius: 10px;
  --shadow: 0 1px 2px rgba(16, 24, 20, 0.06), 0 4px 16px rgba(16, 24, 20, 0.06);
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--text);
  background: var(--bg);
  line-height: 1.5;
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; overflow-wrap: break-word; }
a { color: var(--brand-strong); }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; }
h1 { font-size: 1.6rem; margin: 0 0 0.25rem; letter-spacing: -0.01em; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 0 0 0.5rem; }
h2.section { margin: 2rem 0 0.75rem; }
code { overflow-wrap: anywhere; }
.muted, .hint { color: var(--muted); }
.hint { font-size: 0.875rem; margin: 0; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.skip { position: absolute; left: -999px; top: 0; background: var(--surface); padding: 0.5rem 1rem; z-index: 10; }
.skip:focus { left: 1rem; top: 1rem; }
:focus-visible { outline: 3px solid #6aa7ff; outline-offset: 2px; }

.topbar {
  display: flex; flex-wrap: wrap; align-items: center; gap: 0.75rem 1.5rem;
  padding: 0.75rem 1.5rem; background: var(--surface); border-bottom: 1px solid var(--line);
}
.brand { font-weight: 700; font-size: 1.05rem; display: flex; align-items: center; gap: 0.4rem; }
.brand-sub { font-weight: 500; color: var(--muted); }
.logo { color: var(--brand); font-size: 1.3rem; }
.tenant { font-weight: 600; font-size: 0.8rem; background: var(--brand-soft); color: var(--brand-strong); padding: 0.1rem 0.5rem; border-radius: 999px; }
/* The navigation has a row of its own under the brand and the account at every width, so a long email never pushes it onto three lines. */
.nav { display: flex; flex-wrap: wrap; gap: 0.25rem; order: 3; flex-basis: 100%; min-width: 0; margin: 0 -0.75rem; }
.nav a { text-decoration: none; color: var(--muted); padding: 0.4rem 0.75rem; border-radius: 8px; font-weight: 500; }
.nav a:hover { background: var(--bg); color: var(--text); }
.nav a[aria-current="page"] { background: var(--brand-soft); color: var(--brand-strong); }
.account { display: flex; flex-wrap: wrap; align-items: center; gap: 0.75rem; font-size: 0.9rem; min-width: 0; margin-left: auto; }
.who { display: flex; flex-wrap: wrap; align-items: center; gap: 0.4rem; min-width: 0; overflow-wrap: anywhere; }

main { max-width: 1320px; margin: 0 auto; padding: 1.5rem; }
main:focus { outline: none; }
.breadcrumb { margin: 0 0 0.25rem; color: var(--muted); font-size: 0.85rem; text-transform: uppercase; letter-spacing: 0.06em; }
.page-head { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: flex-end; gap: 1rem; margin-bottom: 1rem; }
.page-head > div:first-child { min-width: 0; flex: 1 1 20rem; }
.page-head p { margin: 0; }
.page-head .actions { display: flex; flex-wrap: wrap; gap: 0.5rem; }

.card { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); padding: 1.5rem; box-shadow: var(--shadow); min-width: 0; }
.card + .card, .card + .table-wrap, .table-wrap + .card { margin-top: 1rem; }
.card.narrow { max-width: 28rem; margin: 3rem auto; }
.card.empty { text-align: center; padding: 3rem 1.5rem; }
.stack { display: flex; flex-direction: column; gap: 0.5rem; }
.stack > label, fieldset legend { font-weight: 600; margin-top: 0.5rem; }
/* A form's buttons keep their own width; only a narrow card's single button (sign in) spans it. */
.stack > .button, .stack > button { align-self: flex-start; }
/* A choice is as wide as its longest option, like the number beside it, not the card's width. */
.stack > select { align-self: flex-start; }
.card.narrow .stack > .button { align-self: stretch; }
.form-actions { display: flex; flex-wrap: wrap; gap: 0.5rem; margin: 0.5rem 0 0; }
fieldset { border: 1px solid var(--line); border-radius: 8px; padding: 0.5rem 1rem 0.75rem; margin: 0; min-width: 0; display: flex; flex-direction: column; gap: 0.35rem; }
fieldset > label { font-weight: 600; }
.choice, fieldset > label:has(> input[type="radio"]), fieldset > label:has(> input[type="checkbox"]), .check { display: flex; gap: 0.5rem; align-items: baseline; padding: 0.25rem 0; font-weight: 400; }

input[type="text"], input[type="email"], input[type="password"], input[type="url"], input[type="number"], input[type="search"], select {
  font: inherit; padding: 0.55rem 0.7rem; border: 1px solid #b9c2bc; border-radius: 8px; background: #fff; color: var(--text); width: 100%; min-width: 0;
}
input[type="number"] { max-width: 12rem; }
select { width: auto; min-width: 12rem; max-width: 100%; cursor: pointer; }
input[type="checkbox"], input[type="radio"] { accent-color: var(--brand); width: 1.05rem; height: 1.05rem; margin: 0; flex: none; position: relative; top: 0.15rem; }
input[aria-invalid="true"], select[aria-invalid="true"] { border-color: var(--danger); }
input[readonly] { background: var(--bg); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85rem; }

.button {
  font: inherit; font-weight: 600; font-size: 0.9rem; display: inline-flex; align-items: center; justify-content: center;
  gap: 0.35rem; padding: 0.5rem 0.9rem; border-radius: 8px; border: 1px solid #b9c2bc; background: var(--surface);
  color: var(--text); cursor: pointer; text-decoration: none; white-space: nowrap;
}
.button:hover { background: var(--bg); }
.button-primary { background: var(--brand); border-color: var(--brand); color: #fff; }
.button-primary:hover { background: var(--brand-strong); }
.button-danger { color: var(--danger); border-color: #e3b4b0; }
.button-danger:hover { background: var(--danger-soft); }
.button-danger-solid { background: var(--danger); border-color: var(--danger); color: #fff; }
.button-danger-solid:hover { background: #8f1e18; }
.button-quiet { border-color: transparent; }
.button-small { padding: 0.3rem 0.6rem; font-size: 0.82rem; }
.button[disabled] { opacity: 0.6; cursor: progress; }

.alert { border-radius: 8px; padding: 0.7rem 0.9rem; margin: 0 0 1rem; border: 1px solid transparent; }
.alert-error { background: var(--danger-soft); border-color: #efc3bf; color: #7d1a14; }
.alert-warning { background: var(--warn-soft); border-color: var(--warn-line); }
.alert-info { background: var(--info-soft); border-color: #c7d7f0; }
.stack .alert { margin: 0.25rem 0; }

.badge { display: inline-block; font-size: 0.78rem; font-weight: 600; padding: 0.1rem 0.5rem; border-radius: 999px; background: #eceff1; color: #37474f; white-space: nowrap; }
.tags { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 0.25rem; }
.tag { font-size: 0.78rem; background: var(--brand-soft); color: var(--brand-strong); padding: 0.1rem 0.5rem; border-radius: 6px; }
.client-id { font-size: 0.8rem; font-weight: 400; color: var(--muted); }
/* An id is one token: whole on a desktop's line, cut anywhere only where a phone has no room (code's overflow-wrap). */
.table .client-id { display: inline-block; max-width: 100%; }

.table-wrap { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); overflow-x: auto; }
.table-wrap + h2, .table-wrap + .section { margin-top: 2rem; }
.table { width: 100%; border-collapse: collapse; font-size: 0.92rem; }
.table th, .table td { text-align: left; padding: 0.65rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
/*
 * Words are never cut on a desktop: a cell wraps between them (and after a name's hyphens), and
 * its longest word, email or address is the least its column gets, so the table's layout narrows
 * the columns of prose instead of cutting "Changed" or an address in two (a time breaks between
 * its date and its time, timeOf). Below 960 px a token (.token: an email, an address; code: an
 * id) may break anywhere where it has no room.
 */
.table td, .table th, .table code { overflow-wrap: break-word; word-break: normal; }
.nowrap { white-space: nowrap; }
.table-wrap + dl { margin-top: 0.75rem; }
.table thead th { font-size: 0.78rem; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); background: #fafbfa; }
.table tbody tr:last-child > * { border-bottom: 0; }
.table tbody tr:hover { background: #fbfcfb; }
.table tbody th { font-weight: 600; min-width: 8rem; }
/* A note under a row's name (the only Account Admin) reads as a note, not as part of the name. */
.table tbody th .hint { font-weight: 400; }
/* The cell stays a table cell (a flex cell would leave the row's borders); its buttons are the flex box. */
.actions { text-align: right; white-space: nowrap; }
.action-buttons { display: inline-flex; gap: 0.35rem; }
.pager { display: flex; gap: 0.5rem; justify-content: flex-end; margin-top: 1rem; }

dialog {
  border: 0; border-radius: 14px; padding: 1.5rem; width: min(32rem, calc(100vw - 2rem)); box-shadow: 0 20px 60px rgba(0, 0, 0, 0.25); color: var(--text);
}
dialog::backdrop { background: rgba(20, 28, 24, 0.45); }
dialog h2 { margin-bottom: 0.25rem; }
.dialog-actions { display: flex; justify-content: flex-end; gap: 0.5rem; margin-top: 1rem; flex-wrap: wrap; }
.copy-row { display: flex; gap: 0.5rem; min-width: 0; }
.button-row { display: flex; flex-wrap: wrap; gap: 0.5rem; margin-top: 1rem; }

/*
 * Below 960 px (phones and tablets) a table's rows are cards: each cell on its own line behind
 * its label (data-label), the label set beside the cell rather than as a grid column, so a cell
 * of several parts (a name and its "you" badge) stays one value.
 */
@media (max-width: 960px) {
  .table thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .table, .table tbody, .table tr, .table th, .table td { display: block; width: 100%; }
  .table tr { border-bottom: 1px solid var(--line); padding: 0.5rem 0; }
  .table tbody tr:last-child { border-bottom: 0; }
  /* The label floats in the cell's left padding; flow-root makes the cell as tall as a label of two lines. */
  .table tbody th, .table td { border: 0; display: flow-root; padding: 0.3rem 1rem 0.3rem 9rem; white-space: normal; }
  .table .token, .table code { overflow-wrap: anywhere; }
  .table tbody th::before, .table td::before { content: attr(data-label); float: left; width: 7.5rem; margin-left: -8rem; padding-top: 0.1rem; font-weight: 600; color: var(--muted); font-size: 0.8rem; overflow-wrap: normal; }
  .table td.actions { padding-left: 1rem; text-align: left; white-space: normal; }
  .table tbody th { min-width: 0; }
  .action-buttons { flex-wrap: wrap; }
  .actions::before { display: none; }
  .table .client-id { display: inline; max-width: none; }
  /* A card has no column to widen: a client id or a date wraps where it must. */
  .table .nowrap { white-space: normal; }
  .card .table { margin: 0 -1.5rem; width: calc(100% + 3rem); }
}
@media (max-width: 760px) {
  .topbar { padding: 0.75rem 1rem; }
  main { padding: 1rem; }
  .card { padding: 1rem; }
  .card .table { margin: 0 -1rem; width: calc(100% + 2rem); }
  .page-head > .button, .page-head .actions { width: 100%; }
  .facts { grid-template-columns: 1fr; gap: 0 1rem; }
  .facts dd { margin-bottom: 0.4rem; }
  .table tbody th, .table td { padding-left: 7.5rem; }
  .table tbody th::before, .table td::before { width: 6rem; margin-left: -6.5rem; }
}

/* An account's own page: its credentials. */
.badge-off { background: var(--danger-soft); color: #7d1a14; }
.credential { margin-bottom: 1rem; }
.card-head { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: center; gap: 0.75rem; margin-bottom: 0.75rem; }
.card-head h2 { margin: 0; }
/* A card's own buttons (a secret's add, reset and remove) wrap under a phone's width rather than widen the page. */
.card-head .actions { display: flex; flex-wrap: wrap; gap: 0.5rem; white-space: normal; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.35rem 1rem; margin: 0; }
.facts dt { font-weight: 600; color: var(--muted); }
.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
.help summary { cursor: pointer; }
.help summary h2 { display: inline; font-size: 1.05rem; }
.help dt { font-weight: 600; margin-top: 0.75rem; }
.help dd { margin: 0.25rem 0 0; }
textarea { max-width: 100%; font: inherit; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.82rem; padding: 0.55rem 0.7rem; border: 1px solid #b9c2bc; border-radius: 8px; width: 100%; resize: vertical; }
`;
