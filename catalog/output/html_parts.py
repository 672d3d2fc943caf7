"""The HTML building blocks of the report (catalog.output.report): the stylesheet, a page with its navigation,
tables whose cells are escaped unless already HTML (``Markup``), images and figures with captions. Plain
strings, no template engine, nothing fetched from the network."""

from __future__ import annotations

import html

__all__ = ["CSS", "escape", "page", "Markup", "cell", "table", "img", "fig_html"]

CSS = """body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em;color:#222;line-height:1.4}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #8ecae6;margin-top:1.6em}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:85%;white-space:pre-wrap;word-break:break-word}
table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:middle}
th{background:#f3f6f9}caption{caption-side:top;text-align:left;font-size:85%;color:#555;padding:.3em 0}
.scroll{overflow-x:auto;max-width:100%}
.PASS{color:#1a7f37;font-weight:bold}.FAIL{color:#c62828;font-weight:bold}img{max-width:100%;height:auto}
.small{font-size:85%;color:#555}nav a{margin-right:1em}
.figs{display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start}
figure{margin:0;max-width:100%;flex:0 0 auto}figcaption{font-size:85%;color:#444;max-width:520px}
.verdict{border:2px solid #1a7f37;border-radius:6px;padding:.4em .9em .7em;margin:1em 0;background:#f5fbf6}
.verdict.failed{border-color:#c62828;background:#fdf4f4}.verdict h2{border:none;margin:.2em 0 .4em}
.num{font-family:monospace;white-space:nowrap}table.nums td{white-space:nowrap}
.prov{margin-bottom:1em}
.prov td{font-family:monospace}.thumb{display:block;width:200px}
table.eq td{border:none;padding:2px 4px}table.eq td.l{text-align:right}table.eq td.r{text-align:left}
table.eq img{vertical-align:middle}.model img{vertical-align:middle}.int img{vertical-align:middle}"""


def escape(x):
    return html.escape(str(x))


def page(title, body, nav=True):
    links = ("<nav><a href='index.html'>all systems</a><a href='relations.html'>relations</a>"
             "<a href='integrators.html'>integrators</a></nav>") if nav else ""
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{escape(title)}</title>"
            f"<link rel='stylesheet' href='style.css'></head><body>{links}\n{body}\n</body></html>\n")


class Markup(str):
    """A table cell already in HTML (not escaped again)."""


def cell(x, span=1):
    sp = f" colspan='{span}'" if span > 1 else ""
    return f"<td{sp}>{x if isinstance(x, Markup) else escape(x)}</td>"


def table(header, rows, caption="", cls=""):
    """An HTML table in a box that scrolls sideways rather than widen the page; a row shorter than the
    header spans its last cell over the rest."""
    c = f" class='{cls}'" if cls else ""
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    head = "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>" if header else ""
    body = []
    for r in rows:
        r = list(r)
        span = max(1, len(header) - len(r) + 1) if header else 1
        body.append("<tr>" + "".join(cell(x) for x in r[:-1]) + cell(r[-1], span) + "</tr>")
    return f"<div class='scroll'><table{c}>{cap}{head}{''.join(body)}</table></div>"


def img(rel, alt, cls=""):
    c = f" class='{cls}'" if cls else ""
    return f"<img src='{escape(rel)}' alt='{escape(alt)}'{c}>"


def fig_html(rel, alt, caption):
    return f"<figure>{img(rel, alt)}<figcaption>{escape(caption)}</figcaption></figure>"
