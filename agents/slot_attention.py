"""A permutation-aware policy for the ``DDLCluster-v1`` observation: attention over queue and running slots.

Why. The v1 observation is a set of queue slots and running slots plus cluster-wide features, and
each start action is "this slot, this placement". An MLP on the flattened vector must learn the same
scoring rule separately for every slot position; the shipped MLP agents start the first job that fits
in 151 of 160 starts (helios-ib200, issue 31's diagnosis), so they barely learnt to choose between
jobs. This network scores every slot with one shared head (a pointer-network-style actor, as in
Decima's per-node scores), after a Transformer encoder lets each queued job see the others, the running
jobs and the cluster.

Architecture (``train_v1 --network attention``):

* tokens: one *context* token from the cluster, global and running-global blocks; one token per
  queue slot (its 11 job features); one per running slot (its 7 features), each block through its own
  linear embedding of width ``d_model``, plus a learnt type embedding per block;
* a ``n_layers``-layer Transformer encoder (``n_heads`` heads, pre-norm, no dropout) over all tokens;
* actor: ``advance`` logit from the context token; ``start slot w with rule p`` logit from a shared
  MLP on [token_w, context] giving one logit per placement rule. The action order is the env's:
  0 = advance, ``1 + w·P + p``;
* critic: an MLP on the context token (and, with ``--critic-sees-future``, the future-arrival
  columns appended after the env's observation, :mod:`ddl_gym.agents.privileged_critic`).

The layout (block sizes) is read from the env's ``observation_layout``; the policy refuses an
observation of another size.
"""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

#: Default size: token width, encoder layers and attention heads (the width must be a multiple of the heads).
D_MODEL, N_LAYERS, N_HEADS = 64, 2, 4


def observation_blocks(layout: dict[str, Any], action_n: int, extra: int = 0) -> dict[str, int]:
    """Block sizes of a v1 observation from ``env.observation_layout`` (and the action count)."""
    if layout.get("observation") != "v1":
        raise ValueError(f"the attention policy reads the v1 observation, not {layout.get('observation')!r}")
    slots = int(layout["slots"])
    placements = (action_n - 1) // slots
    if 1 + slots * placements != action_n:
        raise ValueError(f"{action_n} actions are not 1 + {slots} slots x placements")
    return {"cluster": len(layout["cluster_features"]), "slots": slots, "slot_features": len(layout["job_features"]),
            "global": len(layout["global_features"]), "running_global": len(layout["running_global_features"]),
            "running_slots": int(layout["running_slots"]), "running_features": len(layout["running_slot_features"]),
            "placements": placements, "extra": int(extra)}


class SlotAttentionExtractor(nn.Module):
    """Plays SB3's ``mlp_extractor``: ``forward`` returns (action logits, critic latent)."""

    def __init__(self, blocks: dict[str, int], d_model: int, n_layers: int, n_heads: int) -> None:
        super().__init__()
        b = dict(blocks)
        self.blocks = b
        self.n_context = b["cluster"] + b["global"] + b["running_global"]
        self.n_obs = (b["cluster"] + b["slots"] * b["slot_features"] + b["global"] + b["running_global"]
                      + b["running_slots"] * b["running_features"])
        self.embed_context = nn.Linear(self.n_context, d_model)
        self.embed_slot = nn.Linear(b["slot_features"], d_model)
        self.embed_running = nn.Linear(b["running_features"], d_model)
        self.type_embedding = nn.Parameter(torch.zeros(3, d_model))
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=2 * d_model, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.slot_head = nn.Sequential(nn.Linear(2 * d_model, d_model), nn.Tanh(),
                                       nn.Linear(d_model, b["placements"]))
        self.advance_head = nn.Sequential(nn.Linear(d_model, d_model), nn.Tanh(), nn.Linear(d_model, 1))
        self.value_net = nn.Sequential(nn.Linear(d_model + b["extra"], 256), nn.Tanh(), nn.Linear(256, 256),
                                       nn.Tanh())
        self.latent_dim_pi = 1 + b["slots"] * b["placements"]
        self.latent_dim_vf = 256

    def encode(self, obs: Any) -> tuple[Any, Any]:
        b = self.blocks
        lead = obs.shape[:-1]
        at = 0

        def take(n: int) -> Any:
            nonlocal at
            out = obs[..., at:at + n]
            at += n
            return out

        cluster = take(b["cluster"])
        slots = take(b["slots"] * b["slot_features"]).reshape(*lead, b["slots"], b["slot_features"])
        glob = take(b["global"])
        running_global = take(b["running_global"])
        running = take(b["running_slots"] * b["running_features"]).reshape(*lead, b["running_slots"],
                                                                            b["running_features"])
        context = self.embed_context(torch.cat([cluster, glob, running_global], -1)) + self.type_embedding[0]
        tokens = torch.cat([context.unsqueeze(-2), self.embed_slot(slots) + self.type_embedding[1],
                            self.embed_running(running) + self.type_embedding[2]], -2)
        out = self.norm(self.encoder(tokens))
        return out[..., 0, :], out[..., 1:1 + b["slots"], :]

    def logits(self, context: Any, slot_tokens: Any) -> Any:
        both = torch.cat([slot_tokens, context.unsqueeze(-2).expand_as(slot_tokens)], -1)
        per_slot = self.slot_head(both).flatten(-2)  # slot-major: index w·P + p, as the env's actions
        return torch.cat([self.advance_head(context), per_slot], -1)

    def critic(self, context: Any, obs: Any) -> Any:
        if self.blocks["extra"]:
            context = torch.cat([context, obs[..., self.n_obs:]], -1)
        return self.value_net(context)

    def forward(self, features: Any) -> tuple[Any, Any]:
        context, slot_tokens = self.encode(features)
        return self.logits(context, slot_tokens), self.critic(context, features)

    def forward_actor(self, features: Any) -> Any:
        return self.logits(*self.encode(features))

    def forward_critic(self, features: Any) -> Any:
        return self.critic(self.encode(features)[0], features)


class SlotAttentionPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with the slot-attention actor and critic (module docstring)."""

    def __init__(self, *args: Any, blocks: dict[str, int], d_model: int = D_MODEL, n_layers: int = N_LAYERS,
                 n_heads: int = N_HEADS, **kwargs: Any) -> None:
        self.blocks, self.d_model, self.n_layers, self.n_heads = dict(blocks), d_model, n_layers, n_heads
        super().__init__(*args, **kwargs)
        expected = self.mlp_extractor.n_obs + self.blocks["extra"]
        if self.observation_space.shape != (expected,):
            raise ValueError(f"observation of shape {self.observation_space.shape}, the layout gives ({expected},)")

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SlotAttentionExtractor(self.blocks, self.d_model, self.n_layers, self.n_heads)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the extractor already returns one logit per action
        for head in (self.mlp_extractor.slot_head[-1], self.mlp_extractor.advance_head[-1]):
            nn.init.orthogonal_(head.weight, gain=0.01)
            nn.init.zeros_(head.bias)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return dict(super()._get_constructor_parameters(), blocks=self.blocks, d_model=self.d_model,
                    n_layers=self.n_layers, n_heads=self.n_heads)


__all__ = ["SlotAttentionExtractor", "SlotAttentionPolicy", "observation_blocks"]
