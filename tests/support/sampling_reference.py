"""An independent reference for the transformers backend's sampling: one prompt at a time, no
cache, full forward passes, and the inverse-CDF draw of top-p sampling (Holtzman et al. 2020,
Sec. 3.1) written out in numpy, from a generator seeded for that one row."""

from __future__ import annotations

import torch


def reference_sample(tiny_lm, text, seed, *, top_p=0.9, max_new_tokens=8):
    """The completion of ``text`` sampled with the row seed ``seed`` (module docstring)."""
    import numpy as np
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_lm)
    model = AutoModelForCausalLM.from_pretrained(tiny_lm, dtype=torch.float32).eval()
    eos = set(model.generation_config.eos_token_id)
    ids = tok(text)["input_ids"]
    gen = torch.Generator().manual_seed(seed)
    new: list[int] = []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model(torch.tensor([ids + new])).logits[0, -1].double().numpy()
            p = np.exp(logits - logits.max())
            p /= p.sum()
            order = np.argsort(-p, kind="stable")
            sp = p[order]
            keep = (np.cumsum(sp) - sp) < top_p
            sp = np.where(keep, sp, 0.0)
            cdf = np.cumsum(sp)
            u = float(torch.rand((), generator=gen, dtype=torch.float64))
            token = int(order[min(np.searchsorted(cdf, u * cdf[-1], side="right"), len(cdf) - 1)])
            if token in eos:
                break
            new.append(token)
    return tok.decode(new, skip_special_tokens=True)
