"""Serve the built site on localhost (`make serve`): the site's search reads search.json with a request, which a browser
refuses for pages opened from disk (file://). Prints the URL; the first free port from PORT (default 8000) up; Ctrl-C stops."""
import functools, http.server, os, sys
from pathlib import Path

def main(site='_docs', port=None):
    site = Path(site)
    if not (site/'index.html').exists():
        print(f'make serve: no site in {site}/ yet: build it with `make docs` (or `make reproduce`)', file=sys.stderr); return 1
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
    first = int(port or os.environ.get('PORT') or 8000)
    for p in range(first, first + 50):
        try: srv = http.server.ThreadingHTTPServer(('127.0.0.1', p), functools.partial(Quiet, directory=str(site))); break
        except OSError: continue
    else: print(f'make serve: no free port in {first}-{first + 49}; set PORT=...', file=sys.stderr); return 1
    print(f'site: http://localhost:{p}/  (serving {site.resolve()}; Ctrl-C stops)', flush=True)
    try: srv.serve_forever()
    except KeyboardInterrupt: pass
    return 0

if __name__ == '__main__': sys.exit(main(*sys.argv[1:]))
