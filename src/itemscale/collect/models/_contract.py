"""What the sweep asks of a backend besides its answers, as typed records: `serving` (how the
sweep drives it) and `usage()` (what it counted while it ran). The sweep reads these and
nothing else: no backend is recognised by its name.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, StrictBool, model_validator


class FrameTransport(StrEnum):
    """How a configuration's frames reach the model (`Backend.transport`): the dry run's
    visual-token estimate and `compare`'s provenance read it."""

    #: the frame arrays go to a processor in this process (`hf`, `builtin`)
    IN_PROCESS = "in_process"
    #: over the network, one image per frame (`openai`); a Qwen2-VL-style server makes each
    #: image its own temporal patch, twice a video's tokens per frame
    IMAGE_PARTS = "image_parts"
    #: over the network, one video input holding the frames (`openai` with `video_input`)
    VIDEO = "video"

    @property
    def description(self) -> str:
        return _TRANSPORT_WORDS[self]


_TRANSPORT_WORDS = {
    FrameTransport.IN_PROCESS: "in process",
    FrameTransport.IMAGE_PARTS: "over the network, one image part per frame",
    FrameTransport.VIDEO: "over the network, one video input",
}


class Serving(BaseModel):
    """How the sweep drives a loaded backend (`VideoLM.serving`; docs/backends.md, "The backend
    contract"). Defaults: a local model's. `requests_in_flight`: handed over per call whatever
    `--batch-size` says; `probes_first`: one cell alone, then the budget probe;
    `bytes_per_visual_token`: what `--batch-size auto` divides the free memory by."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests_in_flight: int = Field(default=1, ge=1)
    probes_first: StrictBool = False
    bytes_per_visual_token: int | None = Field(default=None, ge=1)


class BackendUsage(BaseModel):
    """What a backend counted while it ran (`VideoLM.usage()`), recorded per model in run.json
    `sweep.served.<model>` by the local executor. Counts, all zero by default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: the most requests the backend had in flight at once
    max_in_flight: NonNegativeInt = 0
    #: multiple-choice replies that asked for log-probabilities, and those that came without
    logprob_requests: NonNegativeInt = 0
    logprob_missing: NonNegativeInt = 0
    #: replies longer than the backend keeps, and the characters cut from them
    replies_cut: NonNegativeInt = 0
    reply_chars_cut: NonNegativeInt = 0

    @model_validator(mode="after")
    def _missing_within_asked(self) -> BackendUsage:
        if self.logprob_missing > self.logprob_requests:
            raise ValueError(
                f"logprob_missing ({self.logprob_missing}) exceeds logprob_requests "
                f"({self.logprob_requests})"
            )
        return self
