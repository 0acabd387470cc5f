"""Turning repeated measurements into defensible numbers: statistics, grades, bursts, modes, delivery.

Pure Python (stdlib + pydantic) because it runs inside the Lambda layer.
"""

from storagebench.analysis.bimodal import Bimodal, detect_bimodal
from storagebench.analysis.burst import Knee, WindowLabel, detect_knee, fit_knee, label_window
from storagebench.analysis.delivery import (
    Delivery,
    EnvelopeLike,
    check_delivery,
    check_envelope,
    combined_rate,
)
from storagebench.analysis.grades import (
    DEFAULT_SCALE,
    Grade,
    GradeScale,
    LoadScaling,
    grade,
    grade_record,
    load_scaling,
)
from storagebench.analysis.stats import (
    Aggregate,
    Change,
    Summary,
    aggregate,
    classify_change,
    mad,
    median,
    noise_band,
    summarize,
    t_quantile,
)

__all__ = [
    "DEFAULT_SCALE",
    "Aggregate",
    "Bimodal",
    "Change",
    "Delivery",
    "EnvelopeLike",
    "Grade",
    "GradeScale",
    "Knee",
    "LoadScaling",
    "Summary",
    "WindowLabel",
    "aggregate",
    "check_delivery",
    "check_envelope",
    "classify_change",
    "combined_rate",
    "detect_bimodal",
    "detect_knee",
    "fit_knee",
    "grade",
    "grade_record",
    "label_window",
    "load_scaling",
    "mad",
    "median",
    "noise_band",
    "summarize",
    "t_quantile",
]
