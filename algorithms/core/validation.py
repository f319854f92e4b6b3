"""Small validators shared by the parameter dataclasses. Each raises a specific error naming the
quantity, the expected domain, what was given, and (optionally) the formula that requires it."""

import math

import numpy as np

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError


def _where(source: str) -> str:
    return f" (required by {source})" if source else ""


def require_positive(name: str, value: float, source: str = "") -> float:
    if not (isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(value) and value > 0):
        raise InvalidParameterError(f"{name} must be a finite number > 0{_where(source)}; got {value!r}")
    return float(value)


def require_open_unit(name: str, value: float, source: str = "") -> float:
    if not (isinstance(value, (int, float, np.floating, np.integer)) and 0 < value < 1):
        raise InvalidParameterError(f"{name} must lie in the open interval (0, 1){_where(source)}; got {value!r}")
    return float(value)


def require_positive_int(name: str, value: int, source: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidParameterError(f"{name} must be an integer >= 1{_where(source)}; got {value!r}")
    return int(value)


def require_float_array(name: str, value, ndim: int, shape: str = "") -> np.ndarray:
    """`value` as a float array with `ndim` dimensions (`shape` names them in the message, e.g. "(M_k, P)")."""
    expected = f"a numeric {shape} array" if shape else f"a numeric {ndim}-D array"
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidDataError(f"{name} must be {expected}; got {type(value).__name__}") from exc
    if array.ndim != ndim:
        raise InvalidDataError(f"{name} must be {expected}; got shape {array.shape}")
    return array


def require_finite(name: str, array: np.ndarray) -> np.ndarray:
    array = np.asarray(array, dtype=float)
    if not np.all(np.isfinite(array)):
        bad = int(np.size(array) - np.count_nonzero(np.isfinite(array)))
        raise InvalidDataError(f"{name} must be finite; found {bad} NaN/inf value(s) in an array of shape {array.shape}")
    return array
