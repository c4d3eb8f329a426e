"""Write pavlovattn/data/claim_costs.json, the measured seconds per claim that `pavlovattn reproduce` prints before a run and
weighs its ETA with, from a report written by `pavlovattn reproduce --json REPORT.json` (run it from an empty cache).

    python tools/claim_costs.py REPORT.json "2 CPU cores, empty cache, 2026-12-02"
"""
import json, sys
from pathlib import Path

def main(report, where):
    rows = json.loads(Path(report).read_text())
    rows = rows['rows'] if isinstance(rows, dict) else rows          # a report holds its provenance beside its rows
    sec = {r['id']: r['seconds'] for r in rows if isinstance(r.get('seconds'), (int, float)) and r.get('check') in ('pass', 'fail')}
    if not sec: print(f'claim_costs: {report} has no finished rows'); return 2
    out = Path(__file__).resolve().parents[1] / 'pavlovattn' / 'data' / 'claim_costs.json'
    out.write_text(json.dumps({'measured': where, 'total_seconds': round(sum(sec.values()), 1), 'seconds': sec}, indent=1) + '\n')
    print(f'claim_costs: {len(sec)} claims, {sum(sec.values()) / 60:.1f} min in all, written to {out}'); return 0

if __name__ == '__main__':
    if len(sys.argv) != 3: print(__doc__.strip()); sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
