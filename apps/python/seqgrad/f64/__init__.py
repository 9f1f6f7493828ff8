"""seqgrad in double precision: the same API as seqgrad, with float64 tensors (what finite
differences need: seqgrad.f64.gradcheck)."""

from .._core_f64 import *  # noqa: F401,F403
from .._core_f64 import Tensor, real  # noqa: F401
from .. import _core_f64 as _impl
from .._runs import attach as _attach

_attach(globals(), _impl)
del _attach
