"""The pre-registration contract: schema, strict loading, canonical hash, lock, amendment chain,
refusal guard (DESIGN: "The pre-registration contract").

Public entry points::

    from tailgate.prereg import load, PreregError, RefusalError
    study = load("preregistrations/protocol-demo.yaml")  # validated, defaults applied, hashed
    from tailgate.prereg.guard import require_frozen     # refuse unless it matches its lock

An entry point loads a study through :mod:`tailgate.registration`, which adds each analysis
kind's own checks (a layer above this one).
"""

from tailgate.errors import PreregError, RefusalError
from tailgate.prereg.canonical import canonical_hash, canonical_json
from tailgate.prereg.study import Study, load, lock_path_for

__all__ = [
    "PreregError",
    "RefusalError",
    "Study",
    "canonical_hash",
    "canonical_json",
    "load",
    "lock_path_for",
]
