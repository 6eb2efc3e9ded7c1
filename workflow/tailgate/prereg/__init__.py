"""The pre-registration contract: schema, strict loading, canonical hash, lock, amendment chain,
refusal guard (DESIGN: "The pre-registration contract").

A study is loaded in one place, :func:`tailgate.plans.registration.load` (validated, defaults
applied, hashed, each analysis kind's own checks added a layer above this one); refusal unless it
matches its lock is :func:`tailgate.plans.registration.require_frozen`.
"""

from tailgate.errors import PreregError, RefusalError
from tailgate.prereg.canonical import canonical_hash, canonical_json
from tailgate.prereg.study import Study, lock_path_for

__all__ = [
    "PreregError",
    "RefusalError",
    "Study",
    "canonical_hash",
    "canonical_json",
    "lock_path_for",
]
