"""A child interpreter whose address space is capped, for the tests that an
impossible size is a MemoryError: "never a crash or an abort of the
interpreter" (issue #14) and "before anything is allocated" (issue #19).

The child runs ``prelude`` (its imports) and ``setup``, caps RLIMIT_AS at
what it maps then plus 512 MiB, so that an allocation that cannot succeed
fails at once and cheaply, and evaluates ``call``. It reports the outcome
(``OK``, ``MemoryError``, or the exception's type and message) and how many
MiB its peak address space grew by during the call. A Rust allocation that
fails without a fallible path aborts the process instead: SIGABRT, return
code -6.

Linux only (RLIMIT_AS and /proc/self/status).
"""

import subprocess
import sys
from dataclasses import dataclass

CHILD = """
import resource, sys

def status(field):
    with open("/proc/self/status") as lines:
        for line in lines:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024

prelude, setup, call = sys.argv[1], sys.argv[2], sys.argv[3]
ns = {}
exec(prelude, ns)
exec(setup, ns)
limit = status("VmSize") + (512 << 20)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
start = status("VmPeak")
try:
    eval(call, ns)
    outcome = "OK"
except MemoryError:
    outcome = "MemoryError"
except BaseException as error:
    outcome = f"{type(error).__name__} {error}"
print(outcome)
print((status("VmPeak") - start) >> 20)
"""


@dataclass
class Capped:
    """What the child did: its return code, its outcome line, the MiB its
    peak address space grew by during the call, and its stderr's tail."""

    returncode: int
    outcome: str
    grown_mib: int
    stderr: str


def run_capped(prelude: str, setup: str, call: str) -> Capped:
    proc = subprocess.run([sys.executable, "-c", CHILD, prelude, setup, call], capture_output=True, text=True)
    lines = proc.stdout.splitlines()
    outcome = lines[0] if lines else ""
    grown = int(lines[1]) if len(lines) > 1 else -1
    return Capped(proc.returncode, outcome, grown, proc.stderr[-400:])
