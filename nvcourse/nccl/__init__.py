"""Readers for the daily tools of GPU cluster bring-up: nccl-tests output and NCCL_DEBUG=INFO logs.

* :mod:`.nccltests` reads ``all_reduce_perf`` and the other ``*_perf`` outputs;
* :mod:`.ncclog` reads NCCL's INFO/WARN lines;
* :mod:`.diagnose` overlays :func:`nvcourse.costmodel.predict_sweep` and names likely causes, each backed by a
  cited case in ``nvcourse/data/nccl_cases.toml``;
* :mod:`.format` writes rows in nccl-tests' exact format (``nvcourse bench --format nccl-tests``);
* :mod:`.paste` strips launcher and collector prefixes (srun, mpirun, torchrun, Ray, kubectl, pdsh, timestamps);
* :mod:`.tuning_table` reads NCCL's TUNING table and its per-call picks; :mod:`.tuning_compare` puts NCCL's pick
  next to the model's (``nvcourse predict ... --tuning LOG``);
* :mod:`.signatures` applies the runbook's failure signatures (``nvcourse/data/runbook.toml``) to a paste.
"""

from .diagnose import diagnose, recognise_system
from .ncclog import NcclLog
from .ncclog import read_text as read_log
from .nccltests import NcclTestsRun, read_all
from .nccltests import read_text as read_nccl_tests

__all__ = ["NcclLog", "NcclTestsRun", "diagnose", "read_all", "read_log", "read_nccl_tests", "recognise_system"]
