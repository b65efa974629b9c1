"""Builds the transferqueue-jvm wheel with the server jar inside, and installs it into a venv.

The package sources are staged under the output directory (the source tree gets no build files),
the tq-server jar (tq-server/target/tq-server-all.jar) becomes the package data
``transferqueue_jvm/_server/tq-server.jar``, and ``pip wheel`` builds the wheel without build
isolation (setuptools from the environment, no download).

    python python/tools/build_wheel.py --jar JAR --out DIR [--install]
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(HERE)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jar", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--install", action="store_true")
    args = ap.parse_args()
    if not os.path.isfile(args.jar):
        print(f"build_wheel: the server jar {args.jar} is missing (build tq-server first)", file=sys.stderr)
        return 1
    stage = os.path.join(args.out, "stage")
    dist = os.path.join(args.out, "dist")
    shutil.rmtree(stage, ignore_errors=True)
    shutil.rmtree(dist, ignore_errors=True)
    os.makedirs(stage)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(os.path.join(PROJECT, name), stage)
    shutil.copytree(os.path.join(PROJECT, "src"), os.path.join(stage, "src"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "_server"))
    server = os.path.join(stage, "src", "transferqueue_jvm", "_server")
    os.makedirs(server)
    shutil.copy2(args.jar, os.path.join(server, "tq-server.jar"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "--no-deps",
                    "--no-build-isolation", "-q", "-w", dist, stage], check=True)
    wheels = glob.glob(os.path.join(dist, "transferqueue_jvm-*.whl"))
    print(f"build_wheel: {wheels[0]}", flush=True)
    if args.install:
        subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-deps",
                        "--force-reinstall", "-q", wheels[0]], check=True)
        print(f"build_wheel: installed into {sys.prefix}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
