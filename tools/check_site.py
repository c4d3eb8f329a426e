"""Open every page of the built site in headless Chromium (Debian's), and check what a reader would see:
main content present, math rendered (KaTeX or MathJax) where the source has TeX, no broken internal link,
every image loadable (data: URIs decode to a PNG/JPEG/SVG; relative files exist). Prints `site: N passed, M failed`."""
import subprocess, sys, threading, functools, http.server, re, tempfile, base64, html
from pathlib import Path
from urllib.parse import urlsplit, unquote

def serve(root):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=srv.serve_forever, daemon=True).start(); return srv

FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--virtual-time-budget=5000']

def dom(url):
    with tempfile.TemporaryDirectory() as ud:
        return subprocess.run(['chromium', *FLAGS, f'--user-data-dir={ud}', '--dump-dom', url],
                              capture_output=True, text=True, timeout=120).stdout

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

def check_page(page, base):
    d, src, probs = dom(base + page.name), page.read_text(), []
    if not d.strip(): return ['browser returned no DOM']
    main = re.search(r'<main[^>]*>(.*?)</main>', d, re.S)
    if not main or len(re.sub(r'<[^>]+>', '', main.group(1)).strip()) < 40: probs.append('no main content')
    if re.search(r'\\\(|\$\$|\\\[', src) and 'class="katex"' not in d and '<mjx-container' not in d:
        probs.append('math not rendered')
    if re.search(r'class="katex-error"', d): probs.append('KaTeX error in math')
    for href in set(re.findall(r'href="([^"#:?]+\.html)', src)):
        if not (page.parent/unquote(href)).exists(): probs.append(f'broken link {href}')
    return probs + image_problems(page, d)

def main(site='_docs'):
    site = Path(site); pages = sorted(site.glob('*.html'))
    if not pages: print(f'site: 0 passed, 1 failed (no pages in {site})'); return 1
    srv = serve(site); base = f'http://127.0.0.1:{srv.server_port}/'; fails = passed = 0
    for page in pages:
        probs = check_page(page, base)
        if probs: fails += 1; print(f'FAIL {page.name}: {probs}')
        else: passed += 1; print(f'ok   {page.name}')
    print(f'site: {passed} passed, {fails} failed'); return 1 if fails else 0

if __name__ == '__main__': sys.exit(main(*sys.argv[1:]))
