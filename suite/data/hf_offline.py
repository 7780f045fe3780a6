"""The Hugging Face libraries in offline mode: nothing is downloaded at run time."""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

import datasets
import datasets.config
import huggingface_hub.constants

_OFFLINE_ENV = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


@contextlib.contextmanager
def hf_offline() -> Iterator[None]:
    """The Hugging Face libraries in offline mode for the block: no request leaves the machine.

    They read the environment once, at import, so the flags they consult at call time are set too."""
    saved_env = {key: os.environ.get(key) for key in _OFFLINE_ENV}
    saved = datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE, huggingface_hub.constants.HF_HUB_OFFLINE
    os.environ.update({key: "1" for key in _OFFLINE_ENV})
    datasets.config.HF_HUB_OFFLINE = datasets.config.HF_DATASETS_OFFLINE = True
    huggingface_hub.constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE, huggingface_hub.constants.HF_HUB_OFFLINE = saved
