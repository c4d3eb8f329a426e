"""The long fuzz run of issue 14 (the short one is tests/test_fuzz.py, run by `make test`).

1. The properties of tests/test_fuzz.py with fresh random examples and a large budget: the design grammar against the
   reference reading of it, printed designs parsing back to themselves, `recur`'s refusals, and `pavlovattn run` in-process (exit 0 or 2,
   one line on stderr, never a traceback).
2. Real `pavlovattn run` processes with arguments drawn from the same strategy, under a watchdog (wall-clock limit and
   a resident-memory limit polled from /proc): each must exit 0 or 2, print one line on stderr when it exits 2, and
   never a traceback.

    python benchmarks/fuzz_long.py [--examples 5000] [--cli-examples 200] [--processes 60] [--timeout 60] [--rss-gb 4]

Prints one line per stage and exits 1 if anything failed. On 2 cores the defaults take about five minutes (`make bench` runs it too)."""
import argparse, os, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def rss(pid:int) -> int:
    "Resident memory of `pid` in bytes (0 once it is gone)."
    try:
        with open(f'/proc/{pid}/status') as f: return next(int(l.split()[1]) * 1024 for l in f if l.startswith('VmRSS:'))
    except (OSError, StopIteration): return 0

def watched(args:list, timeout:float, rss_limit:int) -> tuple:
    "Run `pavlovattn run ARGS`; (returncode, stderr, why) where `why` names a watchdog kill."
    p = subprocess.Popen([sys.executable, '-m', 'pavlovattn.apps.cli', *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    t0, why = time.time(), None
    while p.poll() is None:
        if time.time() - t0 > timeout: why = f'still running after {timeout:g} s'
        elif rss(p.pid) > rss_limit: why = f'resident memory above {rss_limit / 2**30:g} GiB'
        if why: p.kill(); break
        time.sleep(0.05)
    err = p.communicate()[1]
    return p.returncode, err, why

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--examples', type=int, default=5000, help='examples per grammar property')
    ap.add_argument('--cli-examples', type=int, default=200, help='in-process command lines')
    ap.add_argument('--processes', type=int, default=60, help='real command-line processes under the watchdog')
    ap.add_argument('--timeout', type=float, default=60, help='wall-clock limit per process (s)')
    ap.add_argument('--rss-gb', type=float, default=4, help='resident-memory limit per process (GiB)')
    a = ap.parse_args()
    failed = 0

    env = dict(os.environ, FUZZ_RANDOM='1', FUZZ_EXAMPLES=str(a.examples), FUZZ_CLI_EXAMPLES=str(a.cli_examples))
    t = time.time()
    r = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', str(ROOT / 'tests' / 'test_fuzz.py')],
                       env=env, cwd=ROOT, capture_output=True, text=True)
    print(f'properties ({a.examples} examples each, {a.cli_examples} command lines in-process): '
          f'{"ok" if r.returncode == 0 else "FAILED"} in {time.time() - t:.0f} s')
    if r.returncode: failed += 1; print(r.stdout[-6000:])

    sys.path.insert(0, str(ROOT / 'tests'))
    from hypothesis import given, settings, HealthCheck
    import test_fuzz
    bad, seen, t = [], [], time.time()
    @settings(max_examples=a.processes, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(test_fuzz.argv)
    def draw(args): seen.append(args)
    draw()
    for args in seen:
        rc, err, why = watched(args[1:], a.timeout, int(a.rss_gb * 2**30))
        ok = why is None and rc in (0, 2) and 'Traceback' not in err and (rc == 0 or (len(err.splitlines()) == 1 and err.startswith('pavlovattn')))
        if not ok: bad.append((args, rc, why, err[-500:]))
    print(f'processes: {len(seen) - len(bad)} of {len(seen)} ended with 0 or 2 and one line, within {a.timeout:g} s and {a.rss_gb:g} GiB '
          f'({time.time() - t:.0f} s)')
    for args, rc, why, err in bad[:10]: print(f'  {args!r}: exit {rc}{", " + why if why else ""}: {err.strip()[:300]}')
    failed += bool(bad)
    print('fuzz: ' + ('every check passed' if not failed else f'{failed} stage(s) failed'))
    return 1 if failed else 0

if __name__ == '__main__': sys.exit(main())
