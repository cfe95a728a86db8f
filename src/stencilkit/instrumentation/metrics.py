"""gt4py.next's metrics store: per source (a program on a backend), named lists of samples.

Collection is off unless ``GT4PY_COLLECT_METRICS_LEVEL`` (``stencilkit.config.COLLECT_METRICS_LEVEL``)
is above 0; then every program call adds its wall time, in seconds, to the ``total`` metric
(from ``MINIMAL``) and the ``compute`` metric (from ``PERFORMANCE``, gt4py's levels) of the source ``"<program name><'<backend name>'>"`` (stencilkit times the
whole call: it has no separate kernel timer here).

>>> m = Metric("t"); m.add_sample(0.1); m.add_sample(0.3); round(m.mean, 3)
0.2
"""

from __future__ import annotations

import collections
import contextvars
import dataclasses
import json
import pathlib
import statistics
import sys
from collections.abc import Mapping
from typing import Any, Final

from .. import config

COMPUTE_METRIC: Final[str] = sys.intern("compute")
TOTAL_METRIC: Final[str] = sys.intern("total")

DISABLED: Final[int] = 0
MINIMAL: Final[int] = 1
PERFORMANCE: Final[int] = 10
INFO: Final[int] = 30
VERBOSE: Final[int] = 50
ALL: Final[int] = 100


def get_current_level() -> int:
    """The collection level (``stencilkit.config.COLLECT_METRICS_LEVEL``)."""
    return int(config.COLLECT_METRICS_LEVEL)


def is_any_level_enabled() -> bool:
    return get_current_level() > DISABLED


def is_level_enabled(level: int) -> bool:
    return get_current_level() >= level


@dataclasses.dataclass(frozen=True)
class Metric:
    """The samples of one metric."""

    name: str | None = None
    samples: list[float] = dataclasses.field(default_factory=list)

    @property
    def mean(self) -> float:
        if not self.samples:
            raise ValueError("Cannot compute mean of empty sample list.")
        return statistics.fmean(self.samples)

    @property
    def std(self) -> float:
        if not self.samples:
            raise ValueError("Cannot compute std of empty sample list.")
        return statistics.stdev(self.samples) if len(self.samples) > 1 else float("nan")

    def add_sample(self, sample: float) -> None:
        self.samples.append(sample)

    def __str__(self) -> str:
        return f"{self.mean:.5e} +/- {self.std:.5e}"


class MetricsCollection(dict[str, Metric]):
    """Metric name -> :class:`Metric`, made empty on first access."""

    def __missing__(self, key: str) -> Metric:
        self[key] = metric = Metric(name=key)
        return metric


@dataclasses.dataclass(slots=True)
class Source:
    """What is measured for one program on one backend."""

    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)
    metrics: MetricsCollection = dataclasses.field(default_factory=MetricsCollection)


#: Every measurement, by source key.
sources: collections.defaultdict[str, Source] = collections.defaultdict(Source)

_source_key: contextvars.ContextVar[str] = contextvars.ContextVar("source_key")


def is_current_source_key_set() -> bool:
    return _source_key.get(None) is not None


def set_current_source_key(key: str) -> None:
    _source_key.set(key)


def get_current_source_key() -> str:
    """The key of the source being measured (``LookupError`` when none is set)."""
    return _source_key.get()


def get_current_source() -> Source:
    return sources[_source_key.get()]


def add_sample_to_current_source(metric_name: str, sample: float) -> None:
    sources[_source_key.get()].metrics[metric_name].add_sample(sample)


def dumps(metric_sources: Mapping[str, Source] | None = None) -> str:
    """A table: one line per source and metric, with its mean, deviation and sample count."""
    found = sources if metric_sources is None else metric_sources
    lines = []
    for key, source in found.items():
        for name, metric in source.metrics.items():
            if metric.samples:
                lines.append(f"{key}  {name}: {metric} ({len(metric.samples)} samples)")
    return "\n".join(lines)


def dumps_json(metric_sources: Mapping[str, Source] | None = None) -> str:
    found = sources if metric_sources is None else metric_sources
    return json.dumps(
        {
            key: {
                "metadata": {k: repr(v) for k, v in s.metadata.items()},
                "metrics": {n: m.samples for n, m in s.metrics.items()},
            }
            for key, s in found.items()
        },
        indent=2,
    )


def dump(filename: str | pathlib.Path, metric_sources: Mapping[str, Source] | None = None) -> None:
    pathlib.Path(filename).write_text(dumps(metric_sources))


def dump_json(
    filename: str | pathlib.Path, metric_sources: Mapping[str, Source] | None = None
) -> None:
    pathlib.Path(filename).write_text(dumps_json(metric_sources))
