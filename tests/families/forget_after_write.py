"A family defined outside the package (the battery page's worked example): a delta rule that forgets after its write."
import torch
from pavlovattn.model.families import Family

def step(S, k, v, beta, gamma, kw):          # S [N, d_v, d_k], k [N, d_k], v [N, d_v], beta [N], gamma [N]
    err = v - (S @ k[:, :, None])[..., 0]
    return gamma[:, None, None] * (S + beta[:, None, None] * err[:, :, None] * k[:, None, :])

def acquisition(n, lam, k2, beta, gamma, x0, **_):
    a = gamma * (1 - beta * k2)
    geo = n if a == 1 else (1 - a**n) / (1 - a)
    return a**n * x0 + gamma * beta * lam * k2 * geo

FAMILY = Family('forget-after-write', 'DeltaNet with forgetting after the write', 'Rescorla-Wagner with decay after learning',
                r'S_t = \gamma_t (S_{t-1} + \beta_t (v_t - S_{t-1} k_t) k_t^\top)', step=step, gate='scalar',
                default_gamma=0.95, rate_bound=2.0, acquisition=acquisition, rest=lambda n, gamma: gamma**n, model='rw')

BARE = Family('bare-delta', 'a delta rule with only its step', 'error correction', r'S + \beta (v - S k) k^\top',
              step=lambda S, k, v, beta, gamma, kw: S + beta[:, None, None] * (v - (S @ k[:, :, None])[..., 0])[:, :, None] * k[:, None, :])
