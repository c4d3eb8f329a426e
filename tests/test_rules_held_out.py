"""The after-RW page's held-out animal scores of the biologically plausible rules and Titans' momentum (issue 47): the
animal page's leave-one-experiment-out protocol refuses BCM and the neuromodulated rule (their recurrence overflows on
its grid) and scores the others; on the grid cut below the first overflow (formulated afterwards) all are scored, and
every interval of mean r overlaps the delta rule's, as the page says. Slow: the plain loops run 12 times over 32
experiments per family (minutes)."""
import pytest

@pytest.mark.slow
def test_new_families_held_out_on_the_animal_data():
    from pavlovattn.apps import animal
    from pavlovattn.model.core import NonFiniteError
    from pavlovattn.model.classical import titans
    from pavlovattn.model.families import family
    name = family(titans(0.5)).name                                          # the after-RW page's Titans (eta 0.5)
    top = animal.compile_batch(animal.select())
    held, refused = {}, set()
    for f in ('delta', 'oja', 'bcm', 'divisive', 'neuromodulated', name):
        try: held[f] = animal.cross_validate(f, batch=top, grid=animal.cv_grid(f, top))
        except NonFiniteError: refused.add(f)
    assert refused == {'bcm', 'neuromodulated'}
    for f in sorted(refused):                                                # the grid up to its largest finite beta
        grid = animal.cv_grid(f, top); ok = []
        for p in grid:
            try: animal.strengths(top, f, **p); ok.append(p)
            except NonFiniteError: break
        assert 0 < len(ok) < len(grid)
        held[f] = animal.cross_validate(f, batch=top, grid=ok)
    S = animal.summarize(held)
    assert S['r n'].nunique() == 1 and len(top.exps) == 32
    assert S['r lo'].max() < S['r hi'].min()                                # every interval overlaps every other
