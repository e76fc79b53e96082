"""How far the estimate is from what a provider counts, learned per model and kept on disk.

Each response a real provider sent reports the input tokens it counted; divided by the estimate of the
request that produced it, that is the model's *ratio* (a tokenizer reads code, JSON and prose at
different rates). Requests are then counted as ``estimate × ratio``. The ratio is kept per model in
``<data>/token_calibration.json`` so the first request of the next run (``run --continue``, a resume)
is already calibrated.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from tui.base.atomic import write_atomic
from tui.base.nofollow import LinkRefusedError, read_text

logger = logging.getLogger(__name__)

CALIBRATION_FILE_NAME = "token_calibration.json"
MIN_RATIO = 0.85
"""Never trust an estimate scaled below this: a too-low ratio is the one mistake that overflows."""
MAX_RATIO = 3.0
SMOOTHING = 0.3
MIN_SAMPLE_TOKENS = 200
"""Requests smaller than this say little about the tokenizer (framing dominates); they are not learned."""
SAVE_INTERVAL_SECONDS = 10.0
"""A model's first ratio is saved at once; later ones at most this often, and at :meth:`TokenCalibration.flush`
(a request is not worth a file write: a crash loses at most a few seconds of smoothing)."""


@dataclass
class ModelRatio:
    ratio: float
    samples: int = 0
    latest: float = 1.0
    updated: float = field(default_factory=time.time)

    @property
    def effective(self) -> float:
        """The ratio to count with: the smoothed one, or the latest when it is higher (content changed)."""
        return min(MAX_RATIO, max(MIN_RATIO, self.ratio, self.latest))


class TokenCalibration:
    """Ratios of provider-counted to estimated input tokens, per model name."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._ratios: dict[str, ModelRatio] = self._load()
        self._unsaved = False
        self._saved_at = 0.0

    def _load(self) -> dict[str, ModelRatio]:
        if self.path is None:
            return {}
        try:
            raw = json.loads(read_text(self.path))
        except FileNotFoundError:
            return {}
        except LinkRefusedError as error:  # said once when the session opens (tui.store.data_links)
            logger.info("ignoring the token calibration: %s", error)
            return {}
        except (OSError, ValueError) as error:
            logger.warning("ignoring unreadable token calibration %s: %s", self.path, error)
            return {}
        ratios: dict[str, ModelRatio] = {}
        if isinstance(raw, dict):
            for model, entry in raw.items():
                try:
                    ratios[str(model)] = ModelRatio(float(entry["ratio"]), int(entry.get("samples", 0)),
                                                    float(entry.get("latest", entry["ratio"])),
                                                    float(entry.get("updated", 0.0)))
                except (KeyError, TypeError, ValueError):
                    logger.warning("ignoring a bad calibration entry for %s in %s", model, self.path)
        return ratios

    def ratio(self, model: str) -> float:
        """The factor to multiply estimates of ``model``'s requests by (1.0 until it has been measured)."""
        entry = self._ratios.get(model)
        return entry.effective if entry is not None else 1.0

    def observe(self, model: str, estimated: int, reported: int) -> None:
        """Learn from one request: ``estimated`` by the chain, ``reported`` by the provider."""
        if estimated < MIN_SAMPLE_TOKENS or reported <= 0:
            return
        observed = min(MAX_RATIO, max(0.1, reported / estimated))
        entry = self._ratios.get(model)
        now = time.time()
        if entry is None:
            entry = ModelRatio(observed, 1, observed)
            self._saved_at = 0.0  # a newly learned model is saved at once
        else:
            entry.ratio = entry.ratio + SMOOTHING * (observed - entry.ratio)
            entry.latest = observed
            entry.samples += 1
            entry.updated = now
        self._ratios[model] = entry
        self._unsaved = True
        if now - self._saved_at >= SAVE_INTERVAL_SECONDS:
            self._save()

    def flush(self) -> None:
        """Save what was learned since the last save (the session closes)."""
        if self._unsaved:
            self._save()

    def _save(self) -> None:
        self._unsaved = False
        self._saved_at = time.time()
        if self.path is None:
            return
        payload = {model: {"ratio": round(entry.ratio, 4), "latest": round(entry.latest, 4),
                           "samples": entry.samples, "updated": entry.updated}
                   for model, entry in sorted(self._ratios.items())}
        try:
            write_atomic(self.path, json.dumps(payload, indent=2) + "\n")
        except LinkRefusedError as error:  # said once when the session opens (tui.store.data_links)
            logger.info("token calibration not saved: %s", error)
        except OSError as error:  # the ratio still applies in memory; only the next run starts uncalibrated
            logger.warning("could not save the token calibration %s: %s", self.path, error)
