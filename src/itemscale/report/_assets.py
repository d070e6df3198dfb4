"""The report's inline stylesheet and script (no CDN, no external file: the page opens offline).

The script only reads the JSON data block and builds the item explorer with `textContent`, never
`innerHTML`, so a model output cannot become markup. The page's Content-Security-Policy allows
exactly this script (by its sha256), so even an injected `<script>` would not run.
"""

from __future__ import annotations

import base64
import hashlib
from importlib.resources import files
from typing import Final

CSS: Final[str] = """
:root { --ink: #222; --muted: #666; --line: #ddd; --bg: #fafafa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
  margin: 0; background: #fff; }
header { padding: 18px 28px; background: var(--bg); border-bottom: 1px solid var(--line); }
header h1 { margin: 0 0 6px; font-size: 22px; }
main { padding: 8px 28px 40px; max-width: 1400px; }
h2 { margin: 28px 0 8px; font-size: 18px; border-bottom: 1px solid var(--line);
  padding-bottom: 4px; }
h3 { margin: 18px 0 6px; font-size: 15px; }
.muted { color: var(--muted); }
.row { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
.row > div { min-width: 0; max-width: 100%; }
.figure { background: #fff; border: 1px solid var(--line); }
svg.figure { display: block; max-width: 100%; height: auto; }
svg.figure * { stroke-linejoin: round; stroke-linecap: butt; }
.scroll-x { max-width: 100%; overflow-x: auto; }
.figure-note { max-width: 460px; margin: 4px 0; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { border: 1px solid var(--line); padding: 3px 7px; text-align: left;
  vertical-align: top; }
th { background: var(--bg); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.comp td.num { min-width: 62px; }
.gallery { display: flex; flex-direction: column; gap: 14px; }
.card { border: 1px solid var(--line); padding: 10px; border-radius: 4px; }
.card img { max-width: 100%; image-rendering: pixelated; border: 1px solid var(--line); }
.tag { display: inline-block; padding: 1px 6px; border-radius: 3px; background: #eef;
  margin-right: 4px; }
.legend span { display: inline-block; padding: 0 6px; margin-right: 6px; color: #fff; }
pre.output { white-space: pre-wrap; word-break: break-word; background: var(--bg);
  padding: 4px 6px; margin: 2px 0; max-height: 8em; overflow: auto; }
#item-table { font-size: 12px; }
.explorer { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
.explorer .table-wrap { flex: 3 1 560px; min-width: 0; }
#item-detail { flex: 1 1 340px; border: 1px solid var(--line); padding: 10px;
  max-height: 640px; overflow: auto; position: sticky; top: 0; }
#item-detail img { max-width: 100%; image-rendering: pixelated; }
#item-table tbody tr { cursor: pointer; }
#item-table tbody tr:hover, #item-table tbody tr:focus { outline: 2px solid #0072b2; }
td.traj { white-space: nowrap; }
.tcell { display: inline-block; width: 12px; height: 14px; margin-right: 1px;
  vertical-align: middle; }
.tgap { display: inline-block; width: 6px; }
.oc.y1 { background: #009e73; } .oc.y0 { background: #d55e00; } .oc.none { background: #ccc; }
.oc.s0 { background: #deebf7; } .oc.s1 { background: #9ecae1; } .oc.s2 { background: #6baed6; }
.oc.s3 { background: #3182bd; } .oc.s4 { background: #08519c; }
table.answers td.oc.y1, table.answers td.oc.y0 { color: #fff; }
.controls { flex-wrap: wrap; }
#item-table th { cursor: pointer; user-select: none; position: sticky; top: 0; }
.controls { display: flex; gap: 10px; margin: 8px 0; align-items: center; }
.controls input { width: 260px; }
.table-wrap { max-height: 640px; overflow: auto; border: 1px solid var(--line); }
nav a { margin-right: 12px; }
p.headline { font-size: 16px; margin: 4px 0 8px; max-width: 1100px; }
tr.differs td { background: #fff3cd; }
#item-table { width: 100%; }
#item-table td, #item-table th { overflow-wrap: normal; }
p.derived { padding: 6px 10px; border-left: 4px solid #e6a700; background: #fff8e1; }
p.derived.recomputed { border-left-color: #3182bd; background: #eef5fb; }
"""

#: The item explorer's script, a static file shipped with the package; the page's
#: Content-Security-Policy hashes this text, the one the page places.
JS: Final[str] = (files(__package__) / "static" / "explorer.js").read_text(encoding="utf-8")


def script_hash(script: str) -> str:
    """The CSP source expression that allows exactly `script`."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"
