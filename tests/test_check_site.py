"""tools/check_site.py without a browser: the page defects of issue 36 (raw TeX in a heading, in the table of contents and
in the search index; a table row left as literal pipes; a table cut at 1280 px, read from the layout probe's note) are
found in hand-made HTML, a clean fragment passes, and the command line takes `--help` and a list of pages (under 1 s).
The same defects injected into a built page and opened in Chromium were checked by hand (issue 36 audit)."""
import html, json, shutil, subprocess, sys
import pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))
import check_site as cs

def page(main='', toc=''):
    return (f'<html><body><nav id="TOC" role="doc-toc"><ul>{toc}</ul></nav>'
            f'<main class="content" id="quarto-document-content">{main}</main></body></html>')

def test_heading_problems_find_raw_tex_and_stray_pipes():
    assert cs.heading_problems(page('<h2 id="a">Blocking</h2><p>V = 1, a | b in prose</p>', '<li><a href="#a">Blocking</a></li>')) == []
    rendered = '<h2 id="a">Decay <span class="katex"><annotation encoding="application/x-tex">\\gamma^n</annotation>γn</span></h2>'
    assert cs.heading_problems(page(rendered)) == []                       # KaTeX's TeX annotation is not what a reader sees
    assert cs.heading_problems(page('<h2 id="a">Bound \\max(r_\\text{ext}, 0)</h2>')) == ["raw TeX in a heading: 'Bound \\\\max(r_\\\\text{ext}, 0)'"]
    assert cs.heading_problems(page(toc='<li><a href="#a">Acquisition (1-\\beta)^{n_1}</a></li>')) == [
        "raw TeX in the table of contents: 'Acquisition (1-\\\\beta)^{n_1}'"]
    assert cs.heading_problems(page('<p>| family | blocking |</p>')) == ["a table row left as literal pipes: '| family | blocking |'"]

def test_desktop_problems_read_the_layout_note():
    note = lambda cut: f'<html data-layout="{html.escape(json.dumps(dict(width=1265, scroll=1265, wide=[], heads=[], cut=cut)))}">'
    assert cs.desktop_problems(note([])) == []
    assert cs.desktop_problems(note(['table "delta hebbian" (2400 px wide)']))[0].startswith('at 1280 px a table is cut')
    assert cs.desktop_problems('<html>') == ['layout probe did not run at 1280 px']

def test_desktop_problems_flag_a_cell_narrower_than_its_word_on_the_report_page_only():
    note = lambda narrow: f'<html data-layout="{html.escape(json.dumps(dict(width=1265, scroll=1265, wide=[], heads=[], cut=[], narrow=narrow)))}">'
    cell = ['td "dissociation-relative-validity" (221 px in a 38 px cell)']
    assert cs.desktop_problems(note(cell), whole_words=True) == [f'at 1280 px a table cell is narrower than its longest word: {cell[0]}']
    assert cs.desktop_problems(note(cell)) == [] and cs.desktop_problems(note([]), whole_words=True) == []
    assert 'report.html' in cs.WHOLE_WORDS

@pytest.mark.skipif(shutil.which('chromium') is None, reason='needs Debian chromium (make chromium)')
def test_the_layout_probe_measures_words_in_chromium(tmp_path):
    "The probe in a real browser (about 2 s): a claim id broken letter by letter in a 40 px cell is found; the same id in a cell wide enough, and a long text folded in a closed <details>, are not."
    long = 'x' * 300
    (tmp_path / 'bad.html').write_text(page('<table><tr><td style="width:40px;max-width:40px;overflow-wrap:anywhere">dissociation-relative-validity</td>'
                                            '<td>ok</td></tr></table>'))
    (tmp_path / 'good.html').write_text(page(f'<table><tr><td style="white-space:nowrap">dissociation-relative-validity</td><td style="width:60px">'
                                             f'<details><summary>first words</summary>{long}</details></td></tr></table>'))
    srv = cs.serve(tmp_path); base = f'http://127.0.0.1:{srv.server_port}/'
    try:
        bad, good = (cs.desktop_problems(cs.dom(base + n), whole_words=True) for n in ('bad.html', 'good.html'))
    finally: srv.shutdown()
    assert len(bad) == 1 and 'td "dissociation-relative-validity"' in bad[0], bad
    assert good == [], good

@pytest.mark.skipif(shutil.which('chromium') is None, reason='needs Debian chromium (make chromium)')
def test_a_batch_gives_each_page_what_a_run_of_its_own_gives(tmp_path):
    "Pages loaded side by side in one Chromium run (the site check's batches): each page's DOM and layout note, at 1280 px and at phone width, are those of a run for that page alone (about 10 s)."
    (tmp_path / 'wide.html').write_text(page('<pre style="overflow-x:hidden;white-space:pre">' + 'w' * 400 + '</pre><p>a wide page</p>'))
    (tmp_path / 'cut.html').write_text(page('<table><tr><td style="white-space:nowrap">' + 'dissociation-relative-validity ' * 30 + '</td></tr></table>'))
    (tmp_path / 'fine.html').write_text(page('<p>' + 'a short page with words. ' * 20 + '</p>'))
    srv = cs.serve(tmp_path); base = f'http://127.0.0.1:{srv.server_port}/'; names = ['wide.html', 'cut.html', 'fine.html']
    try:
        wide, narrow = cs.doms(base, names), cs.doms(base, names, 390, 844)
        alone = {n: (cs.dom(base + n), cs.dom(base + 'phone/' + n)) for n in names}
    finally: srv.shutdown()
    note = lambda d: json.loads(html.unescape(__import__('re').search(r'data-layout="([^"]*)"', d).group(1)))
    assert sorted(wide) == sorted(narrow) == sorted(names)
    for n in names:
        d, p = alone[n]
        assert note(wide[n]) == note(d) and note(narrow[n]) == note(p), n
        assert cs.desktop_problems(wide[n]) == cs.desktop_problems(d) and cs.phone_problems(narrow[n]) == cs.phone_problems(p), n
        assert '<main' in wide[n] and wide[n].split('<main', 1)[1] == d.split('<main', 1)[1].rstrip('\n'), n
    assert cs.desktop_problems(wide['wide.html']) and cs.phone_problems(narrow['cut.html']) and not cs.phone_problems(narrow['fine.html'])

def test_search_problems_find_raw_tex_in_a_snippet(tmp_path):
    (tmp_path / 'search.json').write_text(json.dumps([dict(href='a.html', title='A', section='', text='strength (1-\\beta)^{n_1} falls'),
                                                      dict(href='b.html#x', title='B', section='Blocking', text='plain text')]))
    got = cs.search_problems(tmp_path)
    assert list(got) == ['a.html'] and got['a.html'].startswith('raw TeX in a search result text')

def test_command_line_help_and_pages(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, str(ROOT / 'tools' / 'check_site.py'), *a], capture_output=True, text=True, timeout=60)
    r = run('--help')                                                      # was read as a site folder: "no pages in --help", exit 1
    assert r.returncode == 0 and 'Usage: python tools/check_site.py [SITE [PAGE.html ...]]' in r.stdout
    r = run('--pages', 'x.html')
    assert r.returncode == 2 and r.stderr.startswith("check_site: unknown option '--pages'") and len(r.stderr.splitlines()) == 1
    (tmp_path / 'a.html').write_text(page('<p>text</p>'))
    r = run(str(tmp_path), 'nope.html')
    assert r.returncode == 2 and r.stderr == f'check_site: no page nope.html in {tmp_path}\n'

def test_source_compiles_without_warnings():
    "The layout probe's JavaScript sits in a Python bytes literal: a regex escape written `\\s` there was an invalid Python escape (a DeprecationWarning, a SyntaxWarning from 3.12)."
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        compile((ROOT / 'tools' / 'check_site.py').read_text(), 'check_site.py', 'exec')
