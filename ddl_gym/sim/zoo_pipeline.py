"""Table I models of A-SRPT (Luo §V-A-1-b) as synthesised V100 stage profiles, and the configuration planner.

The paper profiles nine models on a V100 and derives distributed configurations with the planner
of [20]; neither the profiles nor the planner's output are published. This module synthesises them
from the public architectures (spec ``shared/specs/asrpt-smd-aonline.md`` §A3.4 #2–#4). Every
assumption, stated once:

* **Layers.** Each model is a chain of layers with (parameters, forward multiply-accumulates per
  sample, output activation elements per sample): VGG19 exactly from its architecture (224×224);
  ResNet152 from its bottleneck stages [3, 8, 36, 3]; Inception-V3 as 14 coarse blocks; the
  transformers per encoder/decoder layer (``12·d²``-style parameter counts, attention-score MACs
  ``2·seq·d_attn`` per token) with the embedding as the first layer. Parameter totals are rescaled
  to Table I's counts (XLNet-large's 550M is above its layer arithmetic; FLOPs are scaled with the
  parameters) and CNN MACs to the published totals (VGG19 19.6 G, ResNet152 11.3 G, Inception-V3 5.7 G).
* **Time.** forward = 2·MACs × batch / (100 TFLOP/s fp16 × utilisation 0.4) per layer; backward =
  2 × forward (:data:`V100_FLOPS`, :data:`UTILISATION`).
* **Sizes.** ``h_s`` = parameters × 4 B (fp32 gradients, spec recommendation); activations in fp16
  (2 B per element); ``d^out_s`` = the stage's output activations of one mini-batch.
* **Per replica** (spec A5 #6): every replica processes one full mini-batch of the Table I batch size
  (blank cells: 32, A5 #17), so ``p^f_s``, ``p^b_s``, ``d^in_s``, ``d^out_s`` are those of one
  mini-batch on one GPU.
* **Memory.** A stage fits a GPU when its parameters × 16 B (Adam with fp32 master weights, the
  spec's rule of thumb) fit the GPU memory (V100: 16 GiB; the testbed's MIG slices: 12 GB).
* **Planner** (stand-in for [20]): for a GPU count ``g``, the stage counts ``S`` are divisors of
  ``g`` with ``k_s = g/S`` replicas each (uniform replication); the layers are split into ``S``
  contiguous stages minimising the slowest stage's compute subject to the memory rule (exact DP).
  It returns up to two configurations: the smallest feasible ``S`` and the next feasible divisor.
  Deviation from the spec's "non-uniform variants (move one replica from the fastest stage to the
  slowest)": under eq. (4) read literally a replica does not shorten its stage, so such variants use
  more GPUs for the same ``α`` and would also break ``k_{s−1}d^out_{s−1} = k_s d^in_s`` with
  full-mini-batch replicas; the second pipeline depth gives the "multiple configurations per model"
  instead.
* **GPT-175B** does not fit 64 V100s under the memory rule (one layer is 1.8 B parameters = 29 GB),
  so it is in no job pool; it appears in Table II's mapping comparison (memory check off), as in the
  paper.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from ddl_gym.sim.model import ConfigError, ModelProfile
from ddl_gym.sim.perf.pipeline import PipelineConfig, StageProfile

V100_FLOPS = 100e12  # fp16 tensor-core FLOP/s (sustained peak assumed)
UTILISATION = 0.4
GRAD_BYTES_PER_PARAM = 4.0  # h_s: fp32 gradients all-reduced
ACT_BYTES_PER_ELEMENT = 2.0  # fp16 activations
MEMORY_BYTES_PER_PARAM = 16.0  # Adam + fp32 master weights (rule of thumb)
V100_MEMORY_BYTES = 16 * 2**30
TESTBED_MEMORY_BYTES = 12e9  # H100 NVL MIG slice (Luo §V-A-1-a)


@dataclass(frozen=True)
class Layer:
    """One layer: parameters, forward MACs per sample, output activation elements per sample."""

    params: float
    macs: float
    out_elements: float


@dataclass(frozen=True)
class ModelArch:
    """A Table I model: its layers and mini-batch size."""

    name: str
    layers: tuple[Layer, ...]
    batch: int

    @property
    def params(self) -> float:
        return sum(layer.params for layer in self.layers)


def _rescale(layers: list[Layer], params: float | None = None, macs: float | None = None) -> tuple[Layer, ...]:
    p_total = sum(x.params for x in layers)
    m_total = sum(x.macs for x in layers)
    fp = params / p_total if params else 1.0
    fm = macs / m_total if macs else fp
    return tuple(Layer(x.params * fp, x.macs * fm, x.out_elements) for x in layers)


def _conv(c_in: int, c_out: int, k: int, hw: int) -> Layer:
    params = c_in * c_out * k * k + c_out
    return Layer(params, (params - c_out) * hw * hw, c_out * hw * hw)


def _vgg19() -> tuple[Layer, ...]:
    layers = []
    c_in, hw = 3, 224
    for c_out, reps in ((64, 2), (128, 2), (256, 4), (512, 4), (512, 4)):
        for _ in range(reps):
            layers.append(_conv(c_in, c_out, 3, hw))
            c_in = c_out
        hw //= 2
    for n_in, n_out in ((512 * 7 * 7, 4096), (4096, 4096), (4096, 1000)):
        layers.append(Layer(n_in * n_out + n_out, n_in * n_out, n_out))
    return _rescale(layers, params=144e6, macs=19.6e9)


def _resnet152() -> tuple[Layer, ...]:
    layers = [Layer(3 * 64 * 49, 3 * 64 * 49 * 112 * 112, 64 * 56 * 56)]
    for width, blocks, hw in ((256, 3, 56), (512, 8, 28), (1024, 36, 14), (2048, 3, 7)):
        mid = width // 4
        params = 2 * width * mid + 9 * mid * mid  # bottleneck 1x1 -> 3x3 -> 1x1
        layers += [Layer(params, params * hw * hw, width * hw * hw)] * blocks
    layers.append(Layer(2048 * 1000, 2048 * 1000, 1000))
    return _rescale(layers, params=60e6, macs=11.3e9)


def _inception_v3() -> tuple[Layer, ...]:
    # (params M, MACs G, output elements) of 14 coarse blocks: stem, 3xA (35x35), B, 4xC (17x17), D, 2xE (8x8), fc.
    table = ((1.1, 1.90, 35 * 35 * 192), (0.26, 0.37, 35 * 35 * 256), (0.28, 0.37, 35 * 35 * 288),
             (0.29, 0.37, 35 * 35 * 288), (1.15, 0.43, 17 * 17 * 768), (1.3, 0.45, 17 * 17 * 768),
             (1.7, 0.60, 17 * 17 * 768), (1.7, 0.60, 17 * 17 * 768), (2.1, 0.75, 17 * 17 * 768),
             (1.7, 0.20, 8 * 8 * 1280), (5.0, 0.30, 8 * 8 * 2048), (6.1, 0.35, 8 * 8 * 2048),
             (2.05, 0.002, 1000))
    return _rescale([Layer(p * 1e6, m * 1e9, o) for p, m, o in table], params=24e6, macs=5.7e9)


def _transformer(*, layers: int, d: int, d_ff: int, vocab: int, seq: int, params: float, d_attn: int | None = None,
                 decoder_layers: int = 0) -> tuple[Layer, ...]:
    d_attn = d_attn or d
    attn = 4 * d * d_attn
    ffn = 2 * d * d_ff
    scores = 2 * seq * d_attn  # QK^T and AV MACs per token
    out = seq * d
    stack = [Layer(vocab * d, 0.0, seq * d)]
    stack += [Layer(attn + ffn, seq * (attn + ffn + scores), out)] * layers
    stack += [Layer(2 * attn + ffn, seq * (2 * attn + ffn + 2 * scores), out)] * decoder_layers
    return _rescale(stack, params=params)


@functools.lru_cache(maxsize=None)
def table_i_models() -> dict[str, ModelArch]:
    """The nine models of Table I (names lower-case, e.g. ``"gpt-13b"``)."""
    return {
        "vgg19": ModelArch("vgg19", _vgg19(), 32),
        "resnet152": ModelArch("resnet152", _resnet152(), 32),
        "inception-v3": ModelArch("inception-v3", _inception_v3(), 32),
        "bert-large": ModelArch("bert-large", _transformer(layers=24, d=1024, d_ff=4096, vocab=30522, seq=512,
                                                           params=340e6), 32),
        "xlnet-large": ModelArch("xlnet-large", _transformer(layers=24, d=1024, d_ff=4096, vocab=32000, seq=512,
                                                             params=550e6), 32),
        "t5-11b": ModelArch("t5-11b", _transformer(layers=24, decoder_layers=24, d=1024, d_ff=65536, d_attn=16384,
                                                   vocab=32128, seq=512, params=11e9), 32),
        "gpt-6.7b": ModelArch("gpt-6.7b", _transformer(layers=32, d=4096, d_ff=16384, vocab=50257, seq=512,
                                                       params=6.7e9), 32),
        "gpt-13b": ModelArch("gpt-13b", _transformer(layers=40, d=5120, d_ff=20480, vocab=50257, seq=512,
                                                     params=13e9), 32),
        "gpt-175b": ModelArch("gpt-175b", _transformer(layers=96, d=12288, d_ff=49152, vocab=50257, seq=512,
                                                       params=175e9), 16),
    }


#: Models with a single-GPU configuration used for single-GPU groups (spec §A3.4 #4).
SINGLE_GPU_POOL: tuple[str, ...] = ("vgg19", "resnet152", "inception-v3", "bert-large", "xlnet-large")


def get_arch(name: str) -> ModelArch:
    models = table_i_models()
    key = name.strip().lower()
    if key not in models:
        raise ConfigError(f"unknown Table I model {name!r}; choose one of {sorted(models)}")
    return models[key]


def _layer_times(arch: ModelArch) -> list[float]:
    rate = V100_FLOPS * UTILISATION
    return [2.0 * layer.macs * arch.batch / rate for layer in arch.layers]


@functools.lru_cache(maxsize=None)
def partition(name: str, stages: int, memory_bytes: float | None) -> tuple[int, ...] | None:
    """Stage boundaries (layer index where each stage starts) minimising the slowest stage's compute,
    every stage's parameters × 16 B within ``memory_bytes`` (``None``: no memory check); ``None`` if infeasible."""
    arch = get_arch(name)
    times = _layer_times(arch)
    params = [layer.params for layer in arch.layers]
    n = len(times)
    if stages > n:
        return None
    cap = math.inf if memory_bytes is None else memory_bytes / MEMORY_BYTES_PER_PARAM
    prefix_t = [0.0]
    prefix_p = [0.0]
    for t, p in zip(times, params):
        prefix_t.append(prefix_t[-1] + t)
        prefix_p.append(prefix_p[-1] + p)
    inf = math.inf
    # best[s][i]: minimal max-stage time placing the first i layers into s stages
    best = [[inf] * (n + 1) for _ in range(stages + 1)]
    cut = [[-1] * (n + 1) for _ in range(stages + 1)]
    best[0][0] = 0.0
    for s in range(1, stages + 1):
        for i in range(s, n + 1):
            for j in range(s - 1, i):
                if best[s - 1][j] == inf or prefix_p[i] - prefix_p[j] > cap:
                    continue
                value = max(best[s - 1][j], prefix_t[i] - prefix_t[j])
                if value < best[s][i]:
                    best[s][i] = value
                    cut[s][i] = j
    if best[stages][n] == inf:
        return None
    starts = []
    i = n
    for s in range(stages, 0, -1):
        j = cut[s][i]
        starts.append(j)
        i = j
    return tuple(reversed(starts))


def stage_config(name: str, stages: int, gpus: int, memory_bytes: float | None = V100_MEMORY_BYTES) -> PipelineConfig | None:
    """The uniform configuration of ``name`` on ``gpus`` GPUs with ``stages`` stages (``None`` if infeasible)."""
    if gpus % stages:
        return None
    starts = partition(name, stages, memory_bytes)
    if starts is None:
        return None
    arch = get_arch(name)
    times = _layer_times(arch)
    k = gpus // stages
    bounds = list(starts) + [len(arch.layers)]
    profiles = []
    for s in range(stages):
        lo, hi = bounds[s], bounds[s + 1]
        fwd = sum(times[lo:hi])
        act_in = arch.layers[lo - 1].out_elements * arch.batch * ACT_BYTES_PER_ELEMENT if s > 0 else 0.0
        act_out = arch.layers[hi - 1].out_elements * arch.batch * ACT_BYTES_PER_ELEMENT if s < stages - 1 else 0.0
        params = sum(layer.params for layer in arch.layers[lo:hi])
        profiles.append(StageProfile(fwd, 2.0 * fwd, act_in, act_out, params * GRAD_BYTES_PER_PARAM, k))
    return PipelineConfig(tuple(profiles), name=f"{name}/{stages}x{k}")


@functools.lru_cache(maxsize=None)
def plan_configs(name: str, gpus: int, memory_bytes: float | None = V100_MEMORY_BYTES) -> tuple[PipelineConfig, ...]:
    """The planner (stand-in for [20]): up to two uniform configurations of ``name`` on ``gpus`` GPUs.

    The smallest feasible stage count ``S`` (a divisor of ``gpus``) and the next feasible divisor.
    Empty if the model cannot run on ``gpus`` GPUs under the memory rule.
    """
    out: list[PipelineConfig] = []
    for stages in (d for d in range(1, gpus + 1) if gpus % d == 0):
        config = stage_config(name, stages, gpus, memory_bytes)
        if config is not None:
            out.append(config)
            if len(out) == 2:
                break
    return tuple(out)


def summary_profile(config: PipelineConfig, model: str) -> ModelProfile:
    """A flat :class:`ModelProfile` summarising a configuration, for generic consumers (the env's
    observation, CSV ``model`` column). The pipeline rate model never reads it."""
    return ModelProfile(
        name=model,
        gradient_bytes=sum(s.param_bytes for s in config.stages),
        forward_s=sum(s.fwd_s for s in config.stages),
        backward_s=sum(s.bwd_s for s in config.stages),
        batch_size=get_arch(model).batch if model in table_i_models() else 32,
    )
