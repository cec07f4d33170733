"""Built-in model profiles.

Ada-SRSF (Wang et al., 2020) Table III, measured on one Tesla V100-16GB with PyTorch 1.2:

| model        | size (MB) | GPU memory (MB) | batch | t_f (ms) | t_b (ms) |
|--------------|-----------|-----------------|-------|----------|----------|
| VGG-16       | 526.4     | 4527            | 16    | 35.8     | 53.7     |
| ResNet-50    | 99.2      | 3213            | 16    | 25.0     | 37.4     |
| Inception-V3 | 103.0     | 3291            | 16    | 34.9     | 52.4     |
| LSTM-PTB     | 251.8     | 2751            | 64    | 31.5     | 47.3     |

Decision: "MB" is read as 10^6 bytes (the paper fits ``b`` in seconds per byte against message
sizes in MB, and the authors' simulator converts with 1e6).
"""

from __future__ import annotations

from ddl_gym.sim.model import ConfigError, ModelProfile

MB = 1e6  # bytes

MODEL_ZOO: dict[str, ModelProfile] = {
    "vgg16": ModelProfile("vgg16", 526.4 * MB, 35.8e-3, 53.7e-3, batch_size=16, gpu_memory_mb=4527),
    "resnet50": ModelProfile("resnet50", 99.2 * MB, 25.0e-3, 37.4e-3, batch_size=16, gpu_memory_mb=3213),
    "inception_v3": ModelProfile("inception_v3", 103.0 * MB, 34.9e-3, 52.4e-3, batch_size=16, gpu_memory_mb=3291),
    "lstm_ptb": ModelProfile("lstm_ptb", 251.8 * MB, 31.5e-3, 47.3e-3, batch_size=64, gpu_memory_mb=2751),
}

#: The four Table III models, in the paper's order.
TABLE_III_MODELS: tuple[str, ...] = ("vgg16", "resnet50", "inception_v3", "lstm_ptb")

_ALIASES = {"vgg-16": "vgg16", "resnet-50": "resnet50", "inception-v3": "inception_v3",
            "inceptionv3": "inception_v3", "lstm-ptb": "lstm_ptb", "lstm": "lstm_ptb"}


def get_model(name: str) -> ModelProfile:
    """Look up a zoo model by name (case-insensitive, paper spellings accepted)."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    try:
        return MODEL_ZOO[key]
    except KeyError:
        raise ConfigError(f"unknown model {name!r}; known models: {', '.join(sorted(MODEL_ZOO))}") from None
