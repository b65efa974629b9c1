"""Each example script of python/examples runs to the end against Java servers it starts itself,
on both backends, and prints what it demonstrated."""

import os
import pathlib
import subprocess
import sys

import pytest

from conftest import BACKENDS

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
TIMEOUT = 300  # seconds per script run: it starts and stops its own servers

# Per script: lines its output must contain (results the script computed, not only a banner).
EXPECTED = {
    "01_core_components.py": ["wrote 4 samples to 'tutorial_partition_0'", "data matches",
                              "Tutorial 1 complete"],
    "02_kv_interface.py": ["'1_1' and '2_0' have ['attention_mask', 'input_ids', 'response']",
                           "remaining ['1_1', '1_2', '2_0']", "Tutorial 2 complete"],
    "03_metadata_concepts.py": ["chunk(3) of 10 -> [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]",
                                "rows 0, 2, 4, 6 match what was put", "Tutorial 3 complete"],
    "04_understanding_controller.py": ["task A: [0, 1, 2] then [3, 4, 5]; task B: [0, 1]",
                                       "task A gets [0, 1, 2, 3, 4, 5] again", "Tutorial 4 complete"],
    "05_custom_sampler.py": ["responses [0, 1, 10, 11]", "first pick [", "Tutorial 5 complete"],
    "06_streaming_dataloader.py": ["ranks of one dp group saw identical batches", "40 in all, each once",
                                   "Tutorial 6 complete"],
    "07_kv_notebook.py": ["3-D jagged hidden_states shapes: [(2, 3, 4), (5, 3, 4), (1, 3, 4)]",
                          "sample 2: 3 image(s) [(3, 16, 16), (3, 24, 24), (3, 32, 64)]",
                          "remaining keys across all partitions: 0", "Key-value notebook complete"],
}


def test_every_example_script_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


# Every script on the default backend; on the other, the scripts whose data paths differ by backend
# (key-value reads and writes, jagged and object columns, streaming reads by several processes).
RUNS = [(s, BACKENDS[0]) for s in sorted(EXPECTED)] + [
    (s, b) for b in BACKENDS[1:] for s in ("02_kv_interface.py", "06_streaming_dataloader.py", "07_kv_notebook.py")]


@pytest.mark.parametrize("script, backend", RUNS)
def test_example_runs_and_prints_its_results(script, backend, need_servers):
    env = dict(os.environ)
    if env.get("TQ_PYTHON_INSTALLED") != "1":
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, str(EXAMPLES / script), "--backend", backend], env=env,
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=EXAMPLES)
    assert done.returncode == 0, f"{script} exited with {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    for line in EXPECTED[script]:
        assert line in done.stdout, f"{script} did not print {line!r}:\n{done.stdout[-3000:]}"
