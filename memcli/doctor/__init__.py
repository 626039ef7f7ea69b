"""Health checks behind ``memcli doctor``: the installation, the settings, the workspace.

Each check reports ``ok``, ``note`` (worth knowing, nothing to do) or ``problem`` (needs
attention, with a hint). Doctor reads and never repairs: the index is opened read-only and no
lock is taken. The only network access is one plain HTTP GET of ``{api_base}/models`` per
configured provider, with a short timeout (LiteLLM is not imported).
"""

from memcli.doctor.report import NOTE, OK, PROBLEM, Check, DoctorReport
from memcli.doctor.run import run_doctor

__all__ = ["NOTE", "OK", "PROBLEM", "Check", "DoctorReport", "run_doctor"]
