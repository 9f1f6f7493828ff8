"""seqgrad from Python: tensors with autograd (numpy in and out), the layers and optimizers,
and runs trained, decoded, explained and explored. Real numbers are float32 here; seqgrad.f64
is the same API in float64 (for gradient checks). docs/python.md describes the API."""

from ._core import *  # noqa: F401,F403
from ._core import Tensor, real  # noqa: F401
from . import _core as _impl
from ._runs import attach as _attach

_attach(globals(), _impl)
del _attach
