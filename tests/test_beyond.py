"""Beyond Rescorla–Wagner (nbs/06_beyond_rescorla_wagner.ipynb): the simulations in float32 against the float64 closed forms."""
import pandas as pd
import torch
from pavlovattn.pages.beyond import PHENOMENA, effects

def test_float32_effects_match_float64_closed_forms():
    "Every phenomenon and family simulated in float32: within 1e-5 of the float64 closed forms, every direction as predicted."
    v32 = pd.concat([effects(n, dtype=torch.float32) for n in PHENOMENA], ignore_index=True)
    assert len(v32) > 0 and v32.as_predicted.all()
    assert v32.abs_err.max() < 1e-5
