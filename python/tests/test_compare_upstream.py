"""The side-by-side comparison with upstream TransferQueue (python/bench/compare_upstream.py).

The end-to-end test runs the harness on ``tiny`` with every system it can start here and checks a
row per system and case with the data read back equal. It needs the comparison environment
(python/bench/requirements-compare.txt) and skips, naming what is missing, without it:

    python3 -m venv --system-site-packages /work/venvs/compare
    /work/venvs/compare/bin/pip install -r python/bench/requirements-compare.txt -e python
    cd python && /work/venvs/compare/bin/python -m pytest tests/test_compare_upstream.py

The other tests check the harness's own pieces (data, check, schedule, requirement messages) and
run everywhere.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

BENCH = Path(__file__).resolve().parents[1] / "bench"
HARNESS = BENCH / "compare_upstream.py"
sys.path.insert(0, str(BENCH))

from compare_workload import Case, make_batch, make_columns, verify  # noqa: E402


_UNAVAILABLE: dict | None = None


def unavailable() -> dict[str, str]:
    """The harness's own verdict: ``{system: what is missing}`` (imports tried in a child)."""
    global _UNAVAILABLE
    if _UNAVAILABLE is None:
        import compare_upstream as cu
        _UNAVAILABLE = cu.check_requirements(cu.SYSTEMS)
    return _UNAVAILABLE


def test_complex_case_splits_fields_and_counts_bytes_as_upstream():
    case = Case.of("tiny", True)
    assert case.field_counts() == (2, 2, 0)
    cols = make_columns(Case("x", True, 4, 6, 5))
    assert [k for k in cols] == ["field_0", "field_1", "nested_field_0", "nested_field_1",
                                 "nontensor_field_0", "nontensor_field_1"]
    assert [r.numel() for r in cols["nested_field_0"][1]] == [1, 2, 4, 5]  # round(1 + j * 4/3)
    assert cols["nested_field_1"][1][3].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert cols["nontensor_field_0"][1] == ["x" * 20] * 4
    c = Case("x", True, 4, 6, 5)
    assert c.nbytes() == 2 * 4 * 5 * 4 + 2 * (1 + 2 + 4 + 5) * 4 + 2 * 4 * 20


def test_check_accepts_rows_in_listed_order_and_refuses_a_changed_value():
    case = Case("x", True, 5, 6, 7)
    batch = make_batch(case)
    cols = make_columns(case)
    keys = [f"test_key_{i}" for i in (3, 0, 4, 1, 2)]
    order = torch.tensor([3, 0, 4, 1, 2])
    got = {"field_0": batch["field_0"][order], "field_1": batch["field_1"][order],
           "nested_field_0": [cols["nested_field_0"][1][i] for i in order.tolist()],
           "nested_field_1": torch.nested.as_nested_tensor([cols["nested_field_1"][1][i] for i in order.tolist()],
                                                           layout=torch.jagged),
           "nontensor_field_0": ["x" * 28] * 5, "nontensor_field_1": ["x" * 28] * 5}
    assert verify(got, cols, keys) is None
    bad = dict(got)
    bad["field_1"] = got["field_1"].clone()
    bad["field_1"][2, 3] += 1
    assert "field_1" in verify(bad, cols, keys)
    bad = dict(got)
    bad["nested_field_0"] = list(got["nested_field_0"])
    bad["nested_field_0"][4] = bad["nested_field_0"][4] + 1
    assert "nested_field_0 row 4" in verify(bad, cols, keys)
    bad = dict(got)
    bad["nontensor_field_1"] = ["x" * 28] * 4 + ["y"]
    assert "nontensor_field_1 row 4" in verify(bad, cols, keys)
    bad = dict(got)
    del bad["field_0"]
    assert "field_0 missing" in verify(bad, cols, keys)
    # upstream returns regular fields as nested tensors: compared row by row
    nested = dict(got)
    nested["field_0"] = torch.nested.as_nested_tensor(list(got["field_0"].unbind(0)), layout=torch.jagged)
    assert verify(nested, cols, keys) is None


def test_blocks_rotate_among_systems():
    import compare_upstream as cu
    plan = cu.schedule(["a", "b", "c"], 5, 2)
    assert plan == [("a", 2), ("b", 2), ("c", 2), ("b", 2), ("c", 2), ("a", 2), ("c", 1), ("a", 1), ("b", 1)]
    assert all(sum(n for s, n in plan if s == x) == 5 for x in "abc")


def test_missing_requirements_are_named_with_their_pip_line(tmp_path):
    if "upstream-simple" not in unavailable():
        pytest.skip("the comparison requirements are installed here: nothing is missing")
    r = subprocess.run([sys.executable, str(HARNESS), "--preset", "tiny", "--systems", "upstream-simple"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert "upstream-simple cannot run" in r.stderr and "pip install" in r.stderr
    assert "requirements-compare.txt" in r.stderr


def test_every_system_that_starts_here_gets_a_row_with_its_data_verified_equal(tmp_path):
    missing = unavailable()
    if "upstream-simple" in missing or "ours-simple" in missing:
        why = missing.get("upstream-simple") or missing.get("ours-simple")
        pytest.skip(f"the comparison requirements are not installed ({why}); "
                    "run: pip install -r python/bench/requirements-compare.txt -e python")
    out = tmp_path / "compare.json"
    chart = tmp_path / "compare.png"
    cmd = [sys.executable, str(HARNESS), "--preset", "tiny", "--case", "simple,complex", "--warmup", "1",
           "--iterations", "2", "--block", "1", "--skip-missing", "--json", str(out), "--chart", str(chart),
           "--log", str(tmp_path / "systems.log")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, f"{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    report = json.loads(out.read_text())
    started = set(report["systems"])
    # the Python-client systems of both projects must start wherever these requirements are installed
    assert {"upstream-simple", "ours-simple", "ours-mooncake"} <= started, (started, report["unavailable"])
    if "upstream-mooncake" not in started:
        assert "upstream-mooncake" in report["unavailable"], "Mooncake neither ran nor said why"
    assert [c["case"]["name"] for c in report["cases"]] == ["tiny simple", "tiny complex"]
    for case in report["cases"]:
        assert set(case["systems"]) == started
        for system, row in case["systems"].items():
            assert row["problem"] is None, (system, row["problem"])
            # the first warm-up and the last measured iteration were read back and compared
            assert row["verified_checks"] == 2, system
            s = row["summary"]
            assert s["iterations"] == 2 and s["put_gbs"] > 0 and s["get_gbs"] > 0 and s["rt_gbs"] > 0
            assert row["peak_rss_bytes"] > 0
            assert all(it["keys"] == case["case"]["batch"] for it in row["iterations"])
        if "java" not in report["unavailable"]:
            assert {r["backend"] for r in case["java_rows"]} == {"SimpleStorage", "MooncakeStore"}
            assert all(r["verified"] for r in case["java_rows"])
        for ours in ("ours-simple", "ours-mooncake"):
            assert "upstream-simple" in case["ratios"][ours]
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for system in started:
        names = " ".join(m["command"] for m in report["systems"][system]["memory"])
        if system.startswith("ours"):
            assert "java" in names  # the servers init() started are measured with the clients
        if system == "upstream-mooncake":
            assert "mooncake_master" in names
        if system.startswith("upstream"):
            assert "raylet" in names or "gcs_server" in names
