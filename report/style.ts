// The report's stylesheet (inline in the page; allowed by its hash in the CSP). System fonts only.
export const REPORT_CSS = `
:root{--fg:#1d232b;--muted:#5d6875;--bg:#fff;--panel:#f5f7f9;--line:#d9dee3;--accent:#2f6fb3;--grow:#d1495b;--shrink:#2f8f6a}
*{box-sizing:border-box}
body{margin:0;font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{padding:10px 16px;border-bottom:1px solid var(--line);display:flex;gap:16px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:16px;margin:0}
.muted{color:var(--muted)}
main{display:grid;grid-template-columns:minmax(0,1fr) 320px;gap:0}
section{padding:10px 16px;border-bottom:1px solid var(--line)}
section h2{font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:0 0 8px}
aside{border-left:1px solid var(--line);background:var(--panel);min-height:100vh}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:3px 6px;border-bottom:1px solid var(--line);vertical-align:top}
th{cursor:pointer;user-select:none;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.row{cursor:pointer}
tr.row:hover,tr.row.selected{background:#e8f0f9}
.frame-list{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;margin:0;padding-left:18px}
.frame-list li{white-space:pre-wrap;word-break:break-all}
.flame{position:relative;overflow:hidden;border:1px solid var(--line);background:#fff}
.flame .node{position:absolute;height:17px;overflow:hidden;white-space:nowrap;font-size:11px;line-height:17px;padding:0 3px;border-right:1px solid #fff;border-bottom:1px solid #fff;cursor:pointer;color:#1d232b}
.flame .node.match{outline:2px solid #000;outline-offset:-2px;font-weight:600}
.flame .node.dim{opacity:.35}
.flame .node.noted{box-shadow:inset 0 -3px 0 var(--note,#e4572e)}
.tooltip{position:fixed;pointer-events:none;background:#1d232b;color:#fff;padding:6px 8px;border-radius:4px;max-width:560px;font-size:12px;white-space:pre-wrap;word-break:break-all;z-index:10;display:none}
.toolbar{display:flex;gap:8px;align-items:center;margin-bottom:8px;flex-wrap:wrap}
button,select,input{font:inherit}
.tabs button[aria-pressed=true]{background:var(--accent);color:#fff;border-color:var(--accent)}
.note{border-left:4px solid var(--c,#e4572e);background:#fff;padding:6px 8px;margin:8px;border-radius:3px;cursor:pointer}
.note .target{font-size:11px;color:var(--muted);word-break:break-all}
.note .text{white-space:pre-wrap;word-break:break-word;margin:4px 0}
.note .when{font-size:11px;color:var(--muted)}
.timeline svg{display:block;width:100%;height:160px}
.badge{display:inline-block;padding:0 6px;border-radius:8px;background:var(--panel);border:1px solid var(--line);font-size:11px}
.warn{color:#8a5a00}
`;
