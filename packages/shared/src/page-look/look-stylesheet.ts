/**
 * The one stylesheet of every page a person sees: the portal's (account-admin) and the token
 * service's sign-in and error pages, so signing in does not look like another product. System
 * fonts, a calm palette, visible focus, and a table that becomes cards on narrow screens. A
 * string module rather than a file, so it is inside every service's build (and image) with no
 * copy step; each service serves it itself (`stylesheetRoute`).
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
body { margin: 0; min-height: 100vh; }
a { color: var(--brand-strong); }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; }
h1 { font-size: 1.6rem; margin: 0 0 0.25rem; letter-spacing: -0.01em; }
h2 { font-size: 1.2rem; margin: 0 0 0.5rem; }
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
.nav { display: flex; gap: 0.25rem; flex: 1; }
.nav a { text-decoration: none; color: var(--muted); padding: 0.4rem 0.75rem; border-radius: 8px; font-weight: 500; }
.nav a:hover { background: var(--bg); color: var(--text); }
.nav a[aria-current="page"] { background: var(--brand-soft); color: var(--brand-strong); }
.account { display: flex; align-items: center; gap: 0.75rem; font-size: 0.9rem; }
.who { display: flex; align-items: center; gap: 0.4rem; }

main { max-width: 1320px; margin: 0 auto; padding: 1.5rem; }
main:focus { outline: none; }
.breadcrumb { margin: 0 0 0.25rem; color: var(--muted); font-size: 0.85rem; text-transform: uppercase; letter-spacing: 0.06em; }
.page-head { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: flex-end; gap: 1rem; margin-bottom: 1rem; }
.page-head p { margin: 0; }

.card { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); padding: 1.5rem; box-shadow: var(--shadow); }
.card.narrow { max-width: 28rem; margin: 3rem auto; }
.card.empty { text-align: center; padding: 3rem 1.5rem; }
.stack { display: flex; flex-direction: column; gap: 0.5rem; }
.stack > label, fieldset legend { font-weight: 600; margin-top: 0.5rem; }
fieldset { border: 1px solid var(--line); border-radius: 8px; padding: 0.5rem 1rem 0.75rem; margin: 0; }
.choice { display: flex; gap: 0.5rem; align-items: baseline; padding: 0.25rem 0; }

input[type="text"], input[type="email"], input[type="password"] {
  font: inherit; padding: 0.55rem 0.7rem; border: 1px solid #b9c2bc; border-radius: 8px; background: #fff; width: 100%; min-width: 0;
}
input[aria-invalid="true"] { border-color: var(--danger); }
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
.client-id { font-size: 0.8rem; color: var(--muted); word-break: break-all; }
.table td .client-id { display: inline-block; min-width: 9rem; max-width: 10.5rem; }

.table-wrap { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); overflow-x: auto; }
.table { width: 100%; border-collapse: collapse; font-size: 0.92rem; }
.table th, .table td { text-align: left; padding: 0.7rem 0.9rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
.table thead th { font-size: 0.78rem; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); background: #fafbfa; }
.table tbody tr:last-child > * { border-bottom: 0; }
.table tbody tr:hover { background: #fbfcfb; }
.table tbody th { font-weight: 600; white-space: nowrap; }
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
.copy-row { display: flex; gap: 0.5rem; }
.button-row { display: flex; flex-wrap: wrap; gap: 0.5rem; margin-top: 1rem; }

@media (max-width: 760px) {
  .topbar { padding: 0.75rem 1rem; }
  .nav { order: 3; flex-basis: 100%; }
  main { padding: 1rem; }
  .table thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .table, .table tbody, .table tr, .table th, .table td { display: block; width: 100%; }
  .table tr { border-bottom: 1px solid var(--line); padding: 0.5rem 0; }
  .table tbody th, .table td { border: 0; padding: 0.3rem 1rem; display: grid; grid-template-columns: 7.5rem 1fr; gap: 0.5rem; }
  .table tbody th::before, .table td::before { content: attr(data-label); font-weight: 600; color: var(--muted); font-size: 0.8rem; }
  .actions { display: block !important; text-align: left; white-space: normal; }
  .action-buttons { flex-wrap: wrap; }
  .actions::before { display: none; }
  .table td .client-id { max-width: none; }
  .page-head .button { width: 100%; }
}

/* An account's own page: its credentials. */
.badge-off { background: var(--danger-soft); color: #7d1a14; }
.credential { margin-bottom: 1rem; }
.card-head { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: center; gap: 0.75rem; margin-bottom: 0.75rem; }
.card-head h2 { margin: 0; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.35rem 1rem; margin: 0; }
.facts dt { font-weight: 600; color: var(--muted); }
.facts dd { margin: 0; }
.help summary { cursor: pointer; }
.help summary h2 { display: inline; font-size: 1.05rem; }
.help dt { font-weight: 600; margin-top: 0.75rem; }
.help dd { margin: 0.25rem 0 0; }
textarea { font: inherit; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.82rem; padding: 0.55rem 0.7rem; border: 1px solid #b9c2bc; border-radius: 8px; width: 100%; resize: vertical; }
`;
