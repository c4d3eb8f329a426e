"The cache module: atomic writes under a racing reader, checked reads, report paths (symlinks, FIFOs, devices, empty)."
import json, os, stat, subprocess, sys, threading
import pytest
from pavlovattn.cache import write_json, read_json, write_report, atomic_write, CacheError, safe_line, finite

def test_a_racing_reader_never_sees_a_torn_entry(tmp_path, capsys):
    "Reproducer 4: 62 of 1,146 reads racing one writer got a JSONDecodeError with path.write_text."
    p = tmp_path / 'e.json'; a, b = dict(x=list(range(2000))), dict(x=list(range(3000)))
    write_json(p, a); stop = threading.Event(); seen = []
    def writer():
        i = 0
        while not stop.is_set(): write_json(p, a if i % 2 else b); i += 1
    def writers_rival():                                     # a second writer on the same key
        while not stop.is_set(): write_json(p, b)
    ts = [threading.Thread(target=writer), threading.Thread(target=writers_rival)]
    for t in ts: t.start()
    try:
        for _ in range(400): seen.append(read_json(p))
    finally:
        stop.set()
        for t in ts: t.join()
    assert all(s in (a, b) for s in seen) and capsys.readouterr().err == ''
    assert sorted(os.listdir(tmp_path)) == ['e.json']

def test_sigterm_during_a_write_leaves_no_temporary_file(tmp_path):
    "A report write killed by SIGTERM removes its temporary file (31 of 48 kills left one)."
    code = ("import os, signal, pavlovattn.cache as c\n"
            "real = os.fsync\n"
            "def slow(fd): os.kill(os.getpid(), signal.SIGTERM); real(fd)\n"
            "os.fsync = slow\n"
            f"c.atomic_write({str(tmp_path / 'r.json')!r}, 'x' * 100000)\n")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 143 and os.listdir(tmp_path) == [], (r.returncode, r.stderr, os.listdir(tmp_path))

def test_report_paths(tmp_path):
    "Reproducer 9: a symlink is followed (its target replaced), a FIFO and a device written in place, an empty path refused."
    t = tmp_path / 't.json'; t.write_text('old'); link = tmp_path / 'l.json'; link.symlink_to(t)
    write_report(link, 'new'); assert link.is_symlink() and t.read_text() == 'new'
    dangling = tmp_path / 'd.json'; dangling.symlink_to(tmp_path / 'nowhere.json')
    write_report(dangling, 'made'); assert dangling.is_symlink() and (tmp_path / 'nowhere.json').read_text() == 'made'
    fifo = tmp_path / 'f'; os.mkfifo(fifo); got = []
    r = threading.Thread(target=lambda: got.append(open(fifo).read())); r.start()
    write_report(fifo, 'piped'); r.join(); assert got == ['piped'] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    write_report('/dev/null', 'x'); assert stat.S_ISCHR(os.stat('/dev/null').st_mode)
    for bad in ('', '  ', None): 
        with pytest.raises(CacheError, match='empty'): write_report(bad, 'x')
    with pytest.raises(CacheError, match='folder'): write_report(tmp_path, 'x')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['d.json', 'f', 'l.json', 'nowhere.json', 't.json']

def test_checks_and_lines():
    assert safe_line('a\x1b[2Jb\x07\x08\u202e\n') == 'a\\x1b[2Jb\\x07\\x08\\u202e\\x0a'
    for bad in (float('nan'), float('inf'), 2.0, True, 'x', None):
        with pytest.raises(CacheError): finite(bad, 0, 1)
    assert finite(0.5, 0, 1) == 0.5
