"""Open every page of the built site in headless Chromium (Debian's), and check what a reader would see: main content
present, math rendered (KaTeX or MathJax) where the source has TeX, no broken internal link and no link to a place
(#id) missing on its page, every image loadable (data: URIs decode to a PNG/JPEG/SVG; relative files exist), no page
twice (same content under two names), no link to the placeholder repository, no code cell on the page whose notebook
has no saved output although its code shows something (a print, a plot, a bare value, a call ended with ';'), no
library warning printed in a saved output, no error saved under a cell (e.g. a GPU cell that failed on a CPU-only
machine), no empty output section, no TeX left unrendered in the text (`$$`, `\\(`, `\\frac`, ...), no raw Markdown
link syntax (`[x](page.html)`, also inside a signature's code block), no class documented as `(*args, **kwargs)` (a
named tuple shows its fields), and, at phone width (390 px), nothing in the page's content wider than the screen
unless it scrolls inside its own box (a figure, a table, a code block, an equation), and no heading running past it;
at 1280 px no table cut (wider than its column with no scroll box, or showing under 60% of its width), on the report
page no table cell narrower than its longest word, no raw TeX in a
heading, in the right-hand table of contents or in a search result's title or snippet, and no table row left as literal pipes.
Prints `site: N passed, M failed`.

Usage: python tools/check_site.py [SITE [PAGE.html ...]]   (SITE default _docs; PAGE: only these pages, e.g. layers.html)"""
import concurrent.futures, subprocess, sys, threading, functools, http.server, re, tempfile, base64, html, ast, json, hashlib
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit, unquote

# Injected into every page the checker serves: after load (and KaTeX), it writes into the page's <html> element what in the
# main content sticks out past the window's right edge without a box of its own inside the content to hold it (overflow-x
# auto, scroll, hidden or clip on a parent below <main>; that box is then checked itself): outermost elements only, and
# how wide the whole page scrolls. (The page grid clips at the window, so content too wide is cut off, not scrolled.)
# KaTeX's invisible MathML copy is left out; a heading whose text does not fit is noted too. The checker reads the note
# from the dumped DOM. At phone width the page is shown in a 390 px frame of a wrapper page (headless Chromium keeps its
# window at least ~500 px wide), and the note goes on the wrapper's <html>.
LAYOUT_PROBE = b"""<script>window.addEventListener('load', () => setTimeout(() => {
  const de = document.documentElement, W = de.clientWidth, main = document.querySelector('main') || document.body;
  const boxed = e => { for (let p = e.parentElement; p && p !== main; p = p.parentElement) {
    if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(p).overflowX)) return true; } return false; };
  const wide = [...main.querySelectorAll('*')].filter(e => { const r = e.getBoundingClientRect();
    const own = e.clientWidth && getComputedStyle(e).overflowX === 'visible' ? e.scrollWidth : 0;   // its text can run past it
    const right = Math.max(r.right, r.left + own);
    return r.width > 0 && r.height > 0 && right > W + 1 && !boxed(e) && !e.closest('.katex-mathml'); });
  const outer = wide.filter(e => !wide.includes(e.parentElement)).slice(0, 4).map(e => e.tagName.toLowerCase()
    + (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/)[0] : '')
    + ' to ' + Math.round(e.getBoundingClientRect().left + Math.max(e.getBoundingClientRect().width, e.scrollWidth)) + ' px');
  const heads = [...main.querySelectorAll('h1, h2, h3, h4, h5')].filter(h => h.scrollWidth > h.clientWidth + 1)
    .slice(0, 4).map(h => h.textContent.trim().slice(0, 40));                    // a heading whose text does not fit
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const cut = [...main.querySelectorAll('table, pre')].filter(e => {          // at 1280 px: see desktop_problems
    if (!e.getBoundingClientRect().width || e.closest('.katex-mathml')) return false;
    if (e.tagName === 'PRE') return e.scrollWidth > e.clientWidth + 1 && ['hidden', 'clip'].includes(getComputedStyle(e).overflowX);
    for (let p = e.parentElement; p; p = p.parentElement) {                  // the first box narrower than the table
      if (p.clientWidth < e.scrollWidth - 1) return !scrolls(p) || p.clientWidth < 0.6 * e.scrollWidth;
      if (p === main) break; }
    return false; }).slice(0, 4).map(e => e.tagName.toLowerCase() + ' "' + e.textContent.trim().replace(/\\s+/g, ' ').slice(0, 40) + '" ('
      + Math.round(e.scrollWidth) + ' px wide)');
  const cv = document.createElement('canvas').getContext('2d'), rng = document.createRange();
  const narrow = [...main.querySelectorAll('td, th')].filter(c => c.getClientRects().length && !c.closest('.katex-mathml')).map(c => {
    const cs = getComputedStyle(c), inner = c.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    let word = '', px = 0;                                   // the cell's longest shown word (text in a closed <details> is not shown)
    for (let w = document.createTreeWalker(c, NodeFilter.SHOW_TEXT), n = w.nextNode(); n; n = w.nextNode()) {
      const shut = n.parentElement.closest('details:not([open])');
      if (shut && !n.parentElement.closest('summary')) continue;
      rng.selectNodeContents(n); if (![...rng.getClientRects()].some(r => r.width > 0)) continue;
      cv.font = getComputedStyle(n.parentElement).font;
      for (const x of n.textContent.split(/\\s+/)) { const m = cv.measureText(x).width; if (m > px) { word = x; px = m; } } }
    return px > inner + 1 ? c.tagName.toLowerCase() + ' "' + word.slice(0, 30) + '" (' + Math.round(px) + ' px in a ' + Math.round(inner) + ' px cell)' : null;
  }).filter(Boolean).slice(0, 4);
  const note = JSON.stringify({width: W, scroll: de.scrollWidth, wide: outer, heads, cut, narrow});
  de.setAttribute('data-layout', note);                          // the page's own <html>; in a frame, also its parent's
  if (window.parent !== window) window.parent.document.documentElement.setAttribute('data-layout', note);
}, 500));</script>"""

def serve(root):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
        def send_head(self):                 # an .html page goes out with the layout probe before </body>
            if self.path.startswith('/phone/'):  # /phone/page.html: the page in a phone-sized frame
                body = PHONE_FRAME.replace(b'PAGE', self.path[len('/phone/'):].encode())
            elif self.path.startswith('/batch/'): body = batch_page(unquote(self.path[len('/batch/'):]))
            else:
                path = self.translate_path(self.path)
                if not path.endswith('.html') or not Path(path).is_file(): return super().send_head()
                body = Path(path).read_bytes().replace(b'</body>', LAYOUT_PROBE + b'</body>', 1)
            self.send_response(200); self.send_header('Content-Type', 'text/html; charset=utf-8')
            self.send_header('Content-Length', str(len(body))); self.end_headers()
            import io; return io.BytesIO(body)
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=srv.serve_forever, daemon=True).start(); return srv

BATCH = 8                                   # pages per Chromium run
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--virtual-time-budget=5000']

PHONE_FRAME = b'<!doctype html><html><body style="margin:0"><iframe src="/PAGE" style="width:390px;height:844px;border:0"></iframe></body></html>'

# /batch/WxH/a.html,b.html: several pages, each in a W x H frame, loaded by one Chromium run (starting Chromium is most of
# a page's check: about 2 s of 2.5). Once every frame has loaded and its layout probe has run, each frame's DOM is copied
# into a <textarea data-page="..."> of the batch page, which `--dump-dom` then returns escaped; `doms` reads them back.
BATCH_SCRIPT = b"""<script>window.addEventListener('load', () => setTimeout(() => {
  for (const f of [...document.querySelectorAll('iframe')]) {
    const t = document.createElement('textarea'); t.setAttribute('data-page', f.dataset.page);
    t.textContent = f.contentDocument ? f.contentDocument.documentElement.outerHTML : ''; document.body.appendChild(t); f.remove(); }
}, 1000));</script>"""

def batch_page(spec:str) -> bytes:
    "The batch page for the path tail 'WxH/a.html,b.html'."
    size, names = spec.split('/', 1); w, h = (int(v) for v in size.split('x'))
    frames = ''.join(f'<iframe data-page="{html.escape(n)}" src="/{html.escape(n)}" style="width:{w}px;height:{h}px;border:0;display:block">'
                     '</iframe>' for n in names.split(','))
    return b'<!doctype html><html><body style="margin:0">' + frames.encode() + BATCH_SCRIPT + b'</body></html>'

def dom(url):
    with tempfile.TemporaryDirectory() as ud:
        return subprocess.run(['chromium', *FLAGS, f'--user-data-dir={ud}', '--window-size=1280,900', '--dump-dom', url],
                              capture_output=True, text=True, timeout=120).stdout

def doms(base, names, width=1280, height=900) -> dict:
    "{page name: its DOM} for pages loaded side by side in one Chromium run, each in a `width` x `height` frame."
    d = dom(base + f'batch/{width}x{height}/' + ','.join(names))
    return {html.unescape(m.group(1)): html.unescape(m.group(2))
            for m in re.finditer(r'<textarea data-page="([^"]*)"[^>]*>(.*?)</textarea>', d, re.S)}

MAGIC = (b'\x89PNG', b'\xff\xd8', b'<svg', b'<?xml', b'GIF8')

def image_problems(page, d):
    probs = []
    for src in set(re.findall(r'<img[^>]*?src="([^"]+)"', d)):
        src = html.unescape(src)
        if src.startswith('data:'):
            try:
                head, data = src.split(',', 1)
                raw = base64.b64decode(data) if ';base64' in head else unquote(data).encode()
                if not raw.lstrip().startswith(MAGIC): probs.append(f'undecodable image {head[:30]}')
            except Exception as e: probs.append(f'bad data image ({e})')
        elif not urlsplit(src).scheme:
            if not (page.parent/unquote(urlsplit(src).path)).exists(): probs.append(f'missing image {src}')
        else: probs.append(f'external image {src}')   # the site must work offline
    return probs

PLACEHOLDER_REPO = 'github.com/example/'

def _directives(src):
    return {m.group(1): m.group(2).strip().lower() for m in re.finditer(r'^#\|\s*([\w-]+):?\s*(.*)$', src, re.M)}

def expects_output(src):
    "Why running this cell's code shows something (None when it need not): a print/display/plot call at its top level, a bare value last, or a last call ended with ';'."
    code = '\n'.join(l for l in src.splitlines() if not l.lstrip().startswith(('#|', '%', '!')))
    try: tree = ast.parse(code)
    except SyntaxError: return None
    if not tree.body: return None
    for st in tree.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            f = st.value.func; name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ''
            if name in ('print', 'display') or name.startswith('plot'): return f'calls {name}()'
    last = tree.body[-1]
    if isinstance(last, ast.Expr):
        if not isinstance(last.value, ast.Call): return 'ends with a value'
        if code.rstrip().endswith(';'): return "ends with a call and ';'"
    return None

def missing_outputs(nb):
    "Cells of notebook `nb` shown on its page (not hidden, exported or unevaluated) that should show output and have none saved."
    probs = []
    for i, c in enumerate(json.loads(Path(nb).read_text())['cells']):
        if c['cell_type'] != 'code' or c.get('outputs'): continue
        src = ''.join(c['source']); d = _directives(src)
        if {'hide', 'export', 'exports', 'exporti'} & d.keys() or 'false' in (d.get('eval'), d.get('output'), d.get('include')): continue
        why = expects_output(src)
        if why:
            first = next((l for l in src.splitlines() if l.strip() and not l.startswith('#|')), '')[:60]
            probs.append(f'no output under cell {i} ({why}): {first}')
    return probs

WARNING_LINE = re.compile(r'^\S.*?:\d+: \w*Warning: ', re.M)   # Python's warnings format: file:line: Category: message

def printed_warnings(nb):
    "Saved outputs of notebook `nb` holding a warning in Python's raw format (`file:line: XWarning: ...`): a library warning a page should not show (a page that means to show one catches it and prints its message)."
    probs = []
    for i, c in enumerate(json.loads(Path(nb).read_text())['cells']):
        for o in c.get('outputs', []):
            txt = ''.join(o.get('text', '')) + ''.join(o.get('data', {}).get('text/plain', ''))
            m = WARNING_LINE.search(txt)
            if m: probs.append(f'a warning printed under cell {i}: ' + txt[m.start():].splitlines()[0][:100])
    return probs

def saved_errors(nb):
    "Cells of notebook `nb` whose saved output is an error (a traceback), as a GPU cell that fails without CUDA would save."
    probs = []
    for i, c in enumerate(json.loads(Path(nb).read_text())['cells']):
        for o in c.get('outputs', []):
            txt = ''.join(o.get('text', '')) if o.get('output_type') == 'stream' else ''
            if o.get('output_type') == 'error' or 'Traceback (most recent call last)' in txt:
                probs.append(f"an error saved under cell {i}: {o.get('ename', '')} {str(o.get('evalue', ''))[:80]}".rstrip()); break
    return probs

def shown_text(d):
    "The text a reader sees in the main content of the dumped DOM `d`, without code blocks and KaTeX's TeX annotations."
    m = re.search(r'<main[^>]*>(.*?)</main>', d, re.S); t = m.group(1) if m else ''
    t = re.sub(r'<(annotation|script|style|pre|code)\b[^>]*>.*?</\1>', ' ', t, flags=re.S)
    return html.unescape(' '.join(re.sub(r'<[^>]+>', ' ', t).split()))

RAW_TEX = re.compile(r'\$\$|\\[(\[]|\\(frac|sum|lVert|mathrm|text|beta|gamma|lambda|tau|top|le|ge|in)\b')
MD_LINK = re.compile(r'\]\([\w./-]*(\.html|\.ipynb|#)[^)\s]*\)')          # [x](page.html#x) left as text
MD_LINK_IN_CODE = re.compile(r'\[`[^`\n]+`\]\([\w./-]*\.html')               # [`x`](page.html...) inside a code block
BARE_CLASS = re.compile(r'def ([A-Z]\w*)\(\s*\*args, \*\*kwargs\s*\)')          # a class documented without its fields

def text_problems(d):
    "Unrendered TeX or Markdown a reader would see in the dumped DOM `d`, and empty output sections."
    probs, text = [], shown_text(d)
    for what, pat in (('TeX left unrendered', RAW_TEX), ('raw Markdown link', MD_LINK)):
        m = pat.search(text)
        if m: probs.append(f'{what}: ...{text[max(0, m.start() - 40):m.end() + 20]}...')
    main = re.search(r'<main[^>]*>(.*?)</main>', d, re.S)
    pres = [html.unescape(re.sub(r'<[^>]+>', '', pre)) for pre in re.findall(r'<pre\b[^>]*>(.*?)</pre>', main.group(1) if main else '', re.S)]
    for code in pres:
        m = MD_LINK_IN_CODE.search(code)
        if m: probs.append(f'raw Markdown link in a code block: {code[max(0, m.start() - 30):m.end() + 10]!r}'); break
    bare = [m.group(1) for code in pres for m in [BARE_CLASS.match(code)] if m]
    if bare: probs.append(f"API docs show {', '.join(bare)} as (*args, **kwargs), not its fields or class line")
    empty = [m for m in re.finditer(r'<div class="cell-output[^"]*">(.*?)</div>', d, re.S)
             if not re.sub(r'<[^>]+>', '', m.group(1)).strip() and not re.search(r'<(img|svg|table|iframe)\b', m.group(1))]
    if empty: probs.append(f'{len(empty)} empty output section(s)')
    return probs

# Pages whose tables must keep every word whole at 1280 px: no cell narrower than its longest shown word (a word broken
# letter by letter, as the report's claim ids and commits were). Other pages' tables may break a long name on purpose.
WHOLE_WORDS = {'report.html'}

def desktop_problems(d, whole_words=False):
    """Tables cut at a 1280 px window (from the layout probe): a table wider than its container with no scroll box to hold
    it, or one whose scroll box shows less than 60% of its width (the reader sees a fragment, e.g. one column of five, and
    the rest only by scrolling sideways; a threshold set after looking at the site's tables, between the cut headline
    tables and the wide numeric ones that scroll acceptably); a code block or output cut with no way to scroll. With
    `whole_words` (the pages of WHOLE_WORDS): a table cell narrower than its longest shown word."""
    m = re.search(r'data-layout="([^"]*)"', d)
    if not m: return ['layout probe did not run at 1280 px']
    lay = json.loads(html.unescape(m.group(1))); probs = []
    if lay.get('cut'): probs.append(f"at 1280 px a table is cut (wider than its column with no scroll box, or under 60% of it shown): {', '.join(lay['cut'])}")
    if whole_words and lay.get('narrow'): probs.append(f"at 1280 px a table cell is narrower than its longest word: {', '.join(lay['narrow'])}")
    return probs

TEX_IN_TITLE = re.compile(r'\\[A-Za-z]+|\$|[\^_]\{')                       # \beta, $...$, ^{...}, _{...}

def _plain(fragment):
    "The text of an HTML fragment as a reader sees it: KaTeX's TeX annotations, scripts and tags left out."
    t = re.sub(r'<(annotation|script|style)\b[^>]*>.*?</\1>', ' ', fragment, flags=re.S)
    return html.unescape(' '.join(re.sub(r'<[^>]+>', ' ', t).split()))

def heading_problems(d):
    "Raw TeX in a heading or in the right-hand table of contents; a stray table row left as a paragraph of literal pipes."
    probs = []
    main = re.search(r'<main[^>]*>(.*?)</main>', d, re.S); body = main.group(1) if main else ''
    heads = [_plain(h) for h in re.findall(r'<h[1-5]\b[^>]*>(.*?)</h[1-5]>', body, re.S)]
    bad = [h for h in heads if TEX_IN_TITLE.search(h)]
    if bad: probs.append(f"raw TeX in a heading: {', '.join(repr(h[:50]) for h in bad[:3])}")
    toc = re.search(r'<nav[^>]*id="TOC"[^>]*>(.*?)</nav>', d, re.S)
    items = [_plain(a) for a in re.findall(r'<a\b[^>]*>(.*?)</a>', toc.group(1), re.S)] if toc else []
    bad = [t for t in items if TEX_IN_TITLE.search(t)]
    if bad: probs.append(f"raw TeX in the table of contents: {', '.join(repr(t[:50]) for t in bad[:3])}")
    rows = [t for t in (_plain(p) for p in re.findall(r'<p\b[^>]*>(.*?)</p>', body, re.S)) if t.startswith('|') and t.count('|') >= 2]
    if rows: probs.append(f"a table row left as literal pipes: {rows[0][:60]!r}")
    return probs

def search_problems(site):
    "{page: problem} for raw TeX in the search index's titles, section names and snippets (what a search result shows)."
    idx = Path(site) / 'search.json'
    if not idx.exists(): return {}
    try: entries = json.loads(idx.read_text())
    except ValueError: return {'search.json': 'search index is not JSON'}
    out = {}
    for e in entries if isinstance(entries, list) else []:
        for k in ('title', 'section', 'text'):
            v = e.get(k) or ''
            if isinstance(v, str) and (TEX_IN_TITLE if k != 'text' else RAW_TEX).search(v):
                page = str(e.get('href', '')).split('#')[0] or 'search.json'
                out.setdefault(page, f'raw TeX in a search result {k}: {v[:60]!r}')
    return out

def phone_problems(d):
    "What sticks out past a phone's screen, from the layout probe's note in the DOM `d` dumped at phone width."
    m = re.search(r'data-layout="([^"]*)"', d)
    if not m: return ['layout probe did not run at phone width']
    lay = json.loads(html.unescape(m.group(1))); probs = []
    if lay['scroll'] > lay['width'] + 1: probs.append(f"at phone width the whole page scrolls sideways ({lay['scroll']} px in a {lay['width']} px window)")
    if lay['wide']: probs.append(f"at phone width wider than the screen, not scrolling in its own box: {', '.join(lay['wide'])}")
    if lay.get('heads'): probs.append(f"at phone width a heading runs past the screen: {', '.join(lay['heads'])}")
    return probs

def page_name(nb):
    "The page nbdev makes of a notebook: 00a_registry.ipynb -> registry.html (its `output-file`)."
    return re.sub(r'^\d+[a-z]?_', '', Path(nb).stem) + '.html'

def main_text(path):
    m = re.search(r'<main[^>]*>(.*?)</main>', path.read_text(), re.S)
    return ' '.join(re.sub(r'<[^>]+>', ' ', m.group(1) if m else '').split())

def duplicates(pages):
    "{page: [other pages with the same main content]} for every page that exists twice under different names."
    by = defaultdict(list)
    for p in pages:
        t = main_text(p)
        if len(t) >= 40: by[hashlib.sha1(t.encode()).hexdigest()].append(p.name)
    return {n: [m for m in g if m != n] for g in by.values() if len(g) > 1 for n in g}

def check_page(page, base, nb=None, dups=(), search=None, d=None, phone=None):
    "What is wrong with one page: its DOM `d` at 1280 px and `phone` at phone width (each loaded alone when not given)."
    d = dom(base + page.name) if d is None else d
    phone = dom(base + 'phone/' + page.name) if phone is None else phone
    src, probs = page.read_text(), []
    if not d.strip(): return ['browser returned no DOM']
    main = re.search(r'<main[^>]*>(.*?)</main>', d, re.S)
    if not main or len(re.sub(r'<[^>]+>', '', main.group(1)).strip()) < 40: probs.append('no main content')
    if re.search(r'\\\(|\$\$|\\\[', src) and 'class="katex"' not in d and '<mjx-container' not in d:
        probs.append('math not rendered')
    if re.search(r'class="katex-error"', d): probs.append('KaTeX error in math')
    for href in set(re.findall(r'href="([^"#:?]+\.html)', src)):
        if not (page.parent/unquote(href)).exists(): probs.append(f'broken link {href}')
    for href, frag in set(re.findall(r'href="([^"#:?]*\.html)?#([^"]+)"', src)):   # a link to a place on a page: it exists
        target = page.parent/unquote(href) if href else page
        if target.exists() and f'id="{frag}"' not in (src if target == page else target.read_text()):
            probs.append(f'link to a missing place {href}#{frag}')
    if PLACEHOLDER_REPO in src: probs.append(f'link to the placeholder repository {PLACEHOLDER_REPO}')
    if dups: probs.append(f"the same page as {', '.join(dups)}")
    if search: probs.append(search)
    if nb is not None: probs += missing_outputs(nb) + printed_warnings(nb) + saved_errors(nb)
    probs += text_problems(d) + desktop_problems(d, page.name in WHOLE_WORDS) + heading_problems(d) + phone_problems(phone)
    return probs + image_problems(page, d)

def main(site='_docs', *only, nbs=Path(__file__).resolve().parent.parent/'nbs'):
    "Check every page of `site`, or only the pages named in `only` (file names such as layers.html); exit status 1 when a page fails, 2 on bad arguments."
    if site in ('-h', '--help'): print(__doc__); return 0
    if site.startswith('-'): print(f'check_site: unknown option {site!r}; usage: python tools/check_site.py [SITE [PAGE.html ...]]', file=sys.stderr); return 2
    site = Path(site); pages = sorted(site.glob('*.html'))
    if not pages: print(f'site: 0 passed, 1 failed (no pages in {site})'); return 1
    missing = [p for p in only if not (site / Path(p).name).is_file()]
    if missing: print(f"check_site: no page {', '.join(missing)} in {site}", file=sys.stderr); return 2
    if only: pages = [p for p in pages if p.name in {Path(o).name for o in only}]   # duplicates and the search index: over the whole site
    notebooks = {page_name(nb): nb for nb in sorted(Path(nbs).glob('*.ipynb')) if not nb.name.startswith(('_', '.'))}
    dups, search = duplicates(sorted(site.glob('*.html'))), search_problems(site)
    srv = serve(site); base = f'http://127.0.0.1:{srv.server_port}/'; fails = passed = 0
    # Pages in batches of BATCH, each batch one Chromium run at 1280 px and one at phone width (a run per page and width
    # took 2-2.5 s, most of it starting Chromium); two batches at a time. A page a batch did not return is loaded alone.
    def check(chunk):
        names = [p.name for p in chunk]; wide, narrow = doms(base, names), doms(base, names, 390, 844)
        return [check_page(p, base, notebooks.get(p.name), dups.get(p.name, ()), search.get(p.name), wide.get(p.name), narrow.get(p.name))
                for p in chunk]
    chunks = [pages[i:i + BATCH] for i in range(0, len(pages), BATCH)]
    with concurrent.futures.ThreadPoolExecutor(2) as pool: found = [x for got in pool.map(check, chunks) for x in got]
    for page, probs in zip(pages, found):
        if probs: fails += 1; print(f'FAIL {page.name}: {probs}')
        else: passed += 1; print(f'ok   {page.name}')
    print(f'site: {passed} passed, {fails} failed'); return 1 if fails else 0

if __name__ == '__main__': sys.exit(main(*sys.argv[1:]))
