"""The package's defaults are the repository's config/tq.yaml, byte for byte."""

import pathlib
from importlib import resources

import pytest

REPO_CONFIG = pathlib.Path(__file__).resolve().parents[2] / "config" / "tq.yaml"


def test_packaged_defaults_are_the_repository_config_file():
    if not REPO_CONFIG.is_file():
        pytest.skip(f"not in the repository: {REPO_CONFIG} is missing")
    packaged = resources.files("transferqueue_jvm").joinpath("defaults.yaml").read_text(encoding="utf-8")
    assert packaged == REPO_CONFIG.read_text(encoding="utf-8"), (
        "python/src/transferqueue_jvm/defaults.yaml differs from config/tq.yaml: copy config/tq.yaml over it")


def test_upstream_and_sampler_keys_of_the_config_file_load():
    from transferqueue_jvm import config
    merged = config.load({"controller": {"sampler": "GRPOGroupNSampler", "sampler_args": {"n_samples_per_prompt": 4}},
                          "backend": {"Yuanrong": {"ucx_env_vars": {"UCX_TLS": "tcp"}}}})
    assert merged["controller"]["sampler_args"] == {"n_samples_per_prompt": 4}
    assert merged["backend"]["Yuanrong"]["ucx_env_vars"] == {"UCX_TLS": "tcp"}
