"""Type stubs of the compiled core (rust/pfgen-python), one submodule per area of the core,
checked against it by `python3 -m mypy.stubtest pfgen_fast._core`."""

from pfgen_fast._core import common as common
from pfgen_fast._core import evalmm as evalmm
from pfgen_fast._core import pfgen as pfgen

__all__ = ["common", "evalmm", "pfgen"]
