"""Timed trials (`{A 0-3, US 5*0.5}`) at the language's boundary: what reads as a cue named US, digits that are not ASCII, and
magnitudes that print with fewer digits than they hold (issue 49, item 8)."""
import pytest
from pavlovattn.design.language import parse_design, DesignError

@pytest.mark.parametrize('text, why', [
    ('{A 0-3, (US) 0}', '(US) would be a cue named US: write the US as US 0'),      # was a cue named US: the trial had no US
    ('{A 0-3, (iti) 4}', '(iti) would be a cue named iti'),
    ('{A 0-3, US 2*\u0661}', 'the US magnitude "\u0661" is not a number'),           # an Arabic-Indic one was read as 1
    ('{A 0-3, US 2*1_5}', 'the US magnitude "1_5" is not a number'),                 # read as 15
])
def test_a_timed_trial_is_refused_in_one_line(text, why):
    with pytest.raises(DesignError, match=why.replace('(', r'\(').replace(')', r'\)').replace('*', r'\*')): parse_design(text)

def test_magnitudes_keep_every_digit():
    "0.1234567 and 0.1234568 printed as one label (6 digits), and the printed design read back as another."
    a, b = (parse_design('{A 0-3, US 2*%s}' % m) for m in ('0.1234567', '0.1234568'))
    assert str(a) != str(b)
    for d in (a, b): assert str(parse_design(str(d).split(': ', 1)[1])) == str(d)
    assert [s.magnitude for s in a.groups[0].phases[0].steps if s.outcome == '+'] == [0.1234567]
