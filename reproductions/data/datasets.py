"""Real datasets of the DP-RECAL experiments (seeds 000/001), read with numpy only and byte-checked.

The files and their origin are described in `shared/data/README.md`; the subsets and the
preprocessing follow the spec `specs/dp_recal.md` §5.1 (v1:L562):

* "remove missing values": rows with a NaN/inf feature or label are dropped and counted
  (`Dataset.missing_rows_removed`); none of the shipped files has any (asserted in the tests).
  In svmlight files an absent `index:value` pair is a stored zero, not a missing value.
* "normalize all numerical features to [0, 1]": ijcnn1 by per-feature min-max (the harness
  default); images by x / 255 (the pixel range; the spec allows it, "equivalent up to constant
  features"). Each `Dataset` records which in `preprocessing`.
* labels "into {+1, -1}": ijcnn1 keeps its -1/+1 labels; for the image subsets the paper does not say
  which class is +1, so the harness default of the spec applies: the second-listed class is +1
  (MNIST digit 0 -> -1, digit 1 -> +1; Fashion-MNIST T-shirt/top (0) -> -1, Trouser (1) -> +1;
  CIFAR-10 cat (3) -> -1, dog (5) -> +1).
* "allocate the data equally to the agents": `split_over_agents`.

Where the files come from, how they are checked and what happens when they are nowhere (fetched if a public
source with a published checksum is known, else "data not available" with the reason): reproductions/data/sources.py.
CIFAR-10 is not in shared/data: it is used when the user provides it (or it can be fetched), and is otherwise
reported as "data not available" (never replaced by synthetic data).

The v0 experiments (seeds/000 Sec. VII-A, v0:L518) use two more sets, with the same preprocessing text:
* "covtype" (55,500 x 54): LIBSVM covtype.binary (`covtype.libsvm.binary.bz2`, 581,012 x 54, labels
  1/2). Not shipped and not fetched (no published checksum): used when the user provides it, checksum-verified
  when that directory's SHA256SUMS lists the file, else its sha256 is recorded. The paper does not say which 55,500 rows it kept:
  the harness keeps the FIRST 55,500 rows of the file (default), then min-max scales them per
  feature; class 1 -> -1, class 2 -> +1 (second-listed class = +1).
* "mnist-v0" (60,000 x 784): the whole MNIST training set. The paper does not say how the 10 digits
  become +-1; default: digits 0-4 -> -1 (30,596 images), digits 5-9 -> +1 (29,404).
"""

from __future__ import annotations

import bz2
import gzip
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from dpverify.algorithms.core.errors import DpverifyError, InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.problems import LocalData
from dpverify.reproductions.data.sources import (  # noqa: F401  (re-exported: the names callers use)
    CHECKSUM_FILE,
    CIFAR10_DIRNAME,
    CIFAR10_NUM_BATCHES,
    COVTYPE_FILE,
    DATA_ENV,
    DATASET_FILES,
    IJCNN1_FILE,
    NOT_AVAILABLE,
    NOTHING_RUN,
    OFFLINE_ENV,
    PROJECT_ROOT,
    SHARED_DATA_DIR,
    ChecksumMismatchError,
    DatasetNotAvailableError,
    batch_directory,
    checked_sha256,
    files_read,
    locate,
    sha256_file,
    shown,
)

IJCNN1_NUM_FEATURES = 22
IDX_IMAGES_MAGIC = 2051
IDX_LABELS_MAGIC = 2049
PIXEL_MAX = 255.0
CIFAR10_CAT, CIFAR10_DOG = 3, 5
COVTYPE_NUM_FEATURES = 54                    # v0:L518
COVTYPE_V0_ROWS = 55_500                     # v0:L518; default: the first 55,500 rows (the subset rule is not stated)
COVTYPE_NEGATIVE, COVTYPE_POSITIVE = 1, 2    # default: second-listed class = +1
MNIST_V0_NEGATIVE = (0, 1, 2, 3, 4)          # default: the v0 mapping of the 10 digits to +-1 is not stated (v0:L518)
MNIST_V0_POSITIVE = (5, 6, 7, 8, 9)


class UnknownDatasetError(DpverifyError, KeyError):
    """A dataset name that `load_dataset` does not know."""

    def __str__(self) -> str:  # KeyError would show the message quoted, as a repr
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True, eq=False)
class Dataset:
    """A binary classification dataset ready for the experiments: features in [0, 1], labels in {-1, +1}."""

    name: str
    features: np.ndarray  # (n, d) float64 in [0, 1]
    labels: np.ndarray  # (n,) float64 in {-1, +1}
    source: str  # which files, from where, and what verified them
    checksum_verified: bool
    preprocessing: str = ""  # scaling and label mapping applied (spec §5.1)
    missing_rows_removed: int = 0
    sha256: Mapping[str, str] = field(default_factory=dict)  # of every file read (recorded even when unverified)

    def __post_init__(self) -> None:
        features = np.array(self.features, dtype=np.float64)
        labels = np.array(self.labels, dtype=np.float64)
        if features.ndim != 2 or labels.shape != (features.shape[0],):
            raise InvalidDataError(
                f"dataset {self.name!r}: expected features (n, d) and labels (n,); got {features.shape} and {labels.shape}"
            )
        if not np.all(np.isfinite(features)) or features.size and (features.min() < 0 or features.max() > 1):
            raise InvalidDataError(f"dataset {self.name!r}: features must be finite and lie in [0, 1] (spec §5.1)")
        if not np.all(np.abs(labels) == 1):
            raise InvalidDataError(
                f"dataset {self.name!r}: labels must lie in {{-1, +1}} (spec §5.1); got {np.unique(labels)}"
            )
        features.setflags(write=False)
        labels.setflags(write=False)
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "labels", labels)

    @property
    def num_samples(self) -> int:
        return self.features.shape[0]

    @property
    def dim(self) -> int:
        return self.features.shape[1]


# --------------------------------------------------------------------------------------------------
# Parsers (numpy only)


def read_svmlight_bz2(path, num_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense (X float64 (n, num_features), y float64 (n,)) from a bzip2 svmlight file
    ("label idx:val idx:val ...", 1-based indices; absent pairs are zeros)."""
    try:
        with bz2.open(path, "rt", encoding="ascii") as stream:
            lines = [line.split("#", 1)[0].split() for line in stream]
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise InvalidDataError(f"{path}: not a readable bzip2 svmlight file ({error})") from error
    lines = [tokens for tokens in lines if tokens]
    try:
        labels = np.array([tokens[0] for tokens in lines], dtype=np.float64)
        counts = np.array([len(tokens) - 1 for tokens in lines])
        pairs = " ".join(" ".join(tokens[1:]) for tokens in lines).replace(":", " ").split()
        flat = np.array(pairs, dtype=np.float64).reshape(-1, 2)
    except ValueError as error:
        raise InvalidDataError(f"{path}: malformed svmlight line, expected 'label idx:val ...' ({error})") from error
    if flat.shape[0] != counts.sum():
        raise InvalidDataError(f"{path}: every feature must be written 'idx:val'")
    indices = flat[:, 0]
    if indices.size and (np.any(indices != np.round(indices)) or indices.min() < 1 or indices.max() > num_features):
        raise InvalidDataError(f"{path}: feature indices must be integers in [1, {num_features}]")
    features = np.zeros((len(lines), num_features))
    features[np.repeat(np.arange(len(lines)), counts), indices.astype(np.int64) - 1] = flat[:, 1]
    return features, labels


def read_idx_gz(path) -> np.ndarray:
    """A gzip IDX file: images (magic 2051, count, rows, cols) -> uint8 (count, rows, cols);
    labels (magic 2049, count) -> uint8 (count,). Header integers are big-endian."""
    try:
        with gzip.open(path, "rb") as stream:
            raw = stream.read()
    except (OSError, EOFError) as error:
        raise InvalidDataError(f"{path}: not a readable gzip file ({error})") from error
    if len(raw) < 8:
        raise InvalidDataError(f"{path}: {len(raw)} bytes, too short for an IDX header")
    magic = int(np.frombuffer(raw, dtype=">u4", count=1)[0])
    if magic not in (IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC):
        raise InvalidDataError(
            f"{path}: IDX magic must be {IDX_IMAGES_MAGIC} (images) or {IDX_LABELS_MAGIC} (labels); got {magic}"
        )
    ndim = 3 if magic == IDX_IMAGES_MAGIC else 1
    header = 4 * (1 + ndim)
    if len(raw) < header:
        raise InvalidDataError(f"{path}: {len(raw)} bytes, too short for an IDX header of {header} bytes")
    shape = tuple(int(size) for size in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    payload = len(raw) - header
    if payload != int(np.prod(shape)):
        raise InvalidDataError(f"{path}: header shape {shape} needs {int(np.prod(shape))} payload bytes; found {payload}")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(shape)


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles only dicts/lists/bytes/numpy arrays: a CIFAR-10 batch cannot run code on load."""

    _ALLOWED = {
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
        ("_codecs", "encode"),
    }

    def find_class(self, module, name):
        if (module, name) not in self._ALLOWED:
            raise InvalidDataError(f"CIFAR-10 batch refers to {module}.{name}; only numpy arrays are allowed")
        return super().find_class(module, name)


def read_cifar10_batches(directory) -> tuple[np.ndarray, np.ndarray]:
    """X uint8 (n, 3072) and labels int64 (n,) from the python pickle batches data_batch_1..k of
    `directory` (k <= 5, consecutive from 1; the real set has all 5 batches of 10,000 images)."""
    directory = Path(directory)
    paths = []
    for number in range(1, CIFAR10_NUM_BATCHES + 1):
        path = directory / f"data_batch_{number}"
        if not path.is_file():
            break
        paths.append(path)
    if not paths:
        raise DatasetNotAvailableError(f"CIFAR-10 data not available: no data_batch_1 in {directory}")
    if any((directory / f"data_batch_{n}").exists() for n in range(len(paths) + 2, CIFAR10_NUM_BATCHES + 1)):
        raise InvalidDataError(
            f"{directory}: CIFAR-10 batches must be consecutive from 1; data_batch_{len(paths) + 1} is missing"
        )
    images, labels = [], []
    for path in paths:
        try:
            with open(path, "rb") as stream:
                batch = _ArrayUnpickler(stream, encoding="bytes").load()
            data = np.asarray(batch[b"data"], dtype=np.uint8)
            batch_labels = np.asarray(batch[b"labels"], dtype=np.int64)
        except InvalidDataError:
            raise
        except (pickle.UnpicklingError, EOFError, KeyError, TypeError, ValueError) as error:
            raise InvalidDataError(
                f"{path}: not a CIFAR-10 python batch (dict with b'data', b'labels'): {error!r}"
            ) from error
        if data.ndim != 2 or data.shape[1] != 3072 or batch_labels.shape != (data.shape[0],):
            raise InvalidDataError(
                f"{path}: expected data (n, 3072) and labels (n,); got {data.shape} and {batch_labels.shape}"
            )
        images.append(data)
        labels.append(batch_labels)
    return np.concatenate(images), np.concatenate(labels)


# --------------------------------------------------------------------------------------------------
# Preprocessing (spec §5.1) and the named datasets


def remove_missing_rows(features: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Spec §5.1 "remove missing values": drop every row with a NaN/inf feature or label."""
    keep = np.all(np.isfinite(features), axis=1) & np.isfinite(labels)
    return features[keep], labels[keep], int(keep.size - np.count_nonzero(keep))


def min_max_scale(features: np.ndarray) -> np.ndarray:
    """Per-feature (x - min) / (max - min) into [0, 1]; a constant feature becomes 0."""
    low, high = features.min(axis=0), features.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    return np.clip((features - low) / span, 0.0, 1.0)


def _class_names(classes: tuple[int, ...]) -> str:
    return f"class {classes[0]}" if len(classes) == 1 else f"classes {classes[0]}-{classes[-1]}"


class FilesChecked(NamedTuple):
    """What `_verified` found of a dataset's files."""

    sums: dict[str, str]    # sha256 of every file read
    verified: bool          # every file's checksum was listed, and matched
    words: str              # how the source line says so


def _verified(name: str, base: Path) -> FilesChecked:
    """sha256 of every file `name` reads in `base` (checked where a checksum is listed), whether all were verified,
    and the words for the source line."""
    checked = {relative: checked_sha256(base, relative) for relative in files_read(name, base)}
    sums = {relative: digest for relative, (digest, _) in checked.items()}
    references = sorted({reference for _, reference in checked.values()})
    verified = bool(checked) and all(reference for _, reference in checked.values())
    words = (f"sha256 verified against {', '.join(references)}" if verified else
             "not verified: no published checksum lists it; sha256 " + ", ".join(f"{r} {d}" for r, d in sums.items()))
    return FilesChecked(sums, verified, words)


def _dataset(name: str, features: np.ndarray, labels: np.ndarray, removed: int, files: FilesChecked, *, source: str,
             preprocessing: str) -> Dataset:
    """A loaded dataset with what `_verified` found of its files (the source line ends with its words)."""
    return Dataset(name, features, labels, source=f"{source} ({files.words})", checksum_verified=files.verified,
                   preprocessing=preprocessing, missing_rows_removed=removed, sha256=files.sums)


def _binary_images(name, base: Path, folder, negative: tuple[int, ...], positive: tuple[int, ...], description,
                   why: str = "second-listed class = +1") -> Dataset:
    checked = _verified(name, base)
    files = DATASET_FILES[name]
    images = read_idx_gz(base / files[0])
    classes = read_idx_gz(base / files[1])
    if images.ndim != 3 or classes.ndim != 1 or images.shape[0] != classes.shape[0]:
        raise InvalidDataError(f"{base / folder}: {images.shape[0]} images but {classes.shape[0]} labels")
    keep = np.isin(classes, negative + positive)
    features = images[keep].reshape(int(keep.sum()), -1) / PIXEL_MAX
    labels = np.where(np.isin(classes[keep], positive), 1.0, -1.0)
    features, labels, removed = remove_missing_rows(features, labels)
    return _dataset(name, features, labels, removed, checked,
                    source=f"{description} training set, {_class_names(negative)} and {_class_names(positive)}: "
                           f"{', '.join(files)} in {shown(base)}",
                    preprocessing=f"pixels / 255; {_class_names(negative)} -> -1, {_class_names(positive)} -> +1 ({why})")


def _load_ijcnn1(base: Path) -> Dataset:
    checked = _verified("ijcnn1", base)
    features, labels = read_svmlight_bz2(base / IJCNN1_FILE, IJCNN1_NUM_FEATURES)
    features, labels, removed = remove_missing_rows(features, labels)
    if not np.all(np.abs(labels) == 1):
        raise InvalidDataError(f"{base / IJCNN1_FILE}: labels must be -1/+1; got {np.unique(labels)}")
    return _dataset("ijcnn1", min_max_scale(features), labels, removed, checked,
                    source=f"LIBSVM ijcnn1 training set (svmlight, bzip2): {IJCNN1_FILE} in {shown(base)}",
                    preprocessing="per-feature min-max to [0, 1] (constant features -> 0); labels -1/+1 as given")


def _load_cifar10(base: Path) -> Dataset:
    checked = _verified("cifar10", base)
    directory = batch_directory(base)
    images, classes = read_cifar10_batches(directory)
    keep = (classes == CIFAR10_CAT) | (classes == CIFAR10_DOG)
    features = images[keep] / PIXEL_MAX
    labels = np.where(classes[keep] == CIFAR10_DOG, 1.0, -1.0)
    features, labels, removed = remove_missing_rows(features, labels)
    return _dataset("cifar10", features, labels, removed, checked,
                    source=f"CIFAR-10 python batches 1..{len(checked.sums)} (of {CIFAR10_NUM_BATCHES}) in "
                           f"{shown(directory)}, cat and dog",
                    preprocessing=f"pixels / 255; cat ({CIFAR10_CAT}) -> -1, dog ({CIFAR10_DOG}) -> +1 "
                                  "(second-listed class = +1)")


def _load_covtype(base: Path) -> Dataset:
    """seeds/000 v0:L518: covtype, 55,500 samples x 54 features (module docstring for the defaults)."""
    checked = _verified("covtype", base)
    path = base / COVTYPE_FILE
    features, classes = read_svmlight_bz2(path, COVTYPE_NUM_FEATURES)
    total = features.shape[0]
    features, classes = features[:COVTYPE_V0_ROWS], classes[:COVTYPE_V0_ROWS]
    if not np.all(np.isin(classes, (COVTYPE_NEGATIVE, COVTYPE_POSITIVE))):
        raise InvalidDataError(f"{path}: covtype.binary labels must be 1/2; got {np.unique(classes)}")
    labels = np.where(classes == COVTYPE_POSITIVE, 1.0, -1.0)
    features, labels, removed = remove_missing_rows(features, labels)
    return _dataset("covtype", min_max_scale(features), labels, removed, checked,
                    source=f"LIBSVM covtype.binary (svmlight, bzip2): {shown(path)}, first {features.shape[0] + removed} "
                           f"of {total} rows",
                    preprocessing=f"first {COVTYPE_V0_ROWS} rows of the file (default: v0:L518 does not say which "
                                  f"55,500 rows); per-feature min-max to [0, 1] on them (constant features -> 0); class "
                                  f"{COVTYPE_NEGATIVE} -> -1, class {COVTYPE_POSITIVE} -> +1 (second-listed class = +1)")


_LOADERS = {
    "ijcnn1": _load_ijcnn1,
    "mnist": lambda d: _binary_images("mnist", d, "mnist", (0,), (1,), "MNIST"),
    "fashion-mnist": lambda d: _binary_images("fashion-mnist", d, "fashion-mnist", (0,), (1,), "Fashion-MNIST"),
    "cifar10": _load_cifar10,
    "covtype": _load_covtype,
    "mnist-v0": lambda d: _binary_images("mnist-v0", d, "mnist", MNIST_V0_NEGATIVE, MNIST_V0_POSITIVE, "MNIST",
                                         why="default: v0:L518 does not state the mapping of the 10 digits"),
}
DATASET_NAMES = tuple(_LOADERS)
NOT_SHIPPED = ("cifar10", "covtype")  # not in shared/data: used when the user provides them


def _known(name: str) -> None:
    if name not in _LOADERS:
        raise UnknownDatasetError(f"unknown dataset {name!r}; known datasets: {', '.join(DATASET_NAMES)}")


def load_dataset(name: str, data_dir=None) -> Dataset:
    """The named dataset with the spec's subset and preprocessing, from `data_dir` if given, else from where
    sources.locate finds it (fetching it if it can); checksums are checked before parsing."""
    _known(name)
    return _LOADERS[name](locate(name, data_dir))


def availability(data_dir=None) -> dict[str, str]:
    """Dataset name -> "" when its files are where load_dataset looks, else why not (the files, their checksum,
    where it looked, how to provide them). Cheap: it fetches nothing and reads no file."""
    reasons = {}
    for name in DATASET_NAMES:
        try:
            locate(name, data_dir, download=False)
            reasons[name] = ""
        except DatasetNotAvailableError as error:
            reasons[name] = str(error)
    return reasons


def split_over_agents(dataset: Dataset, num_agents: int, rng=None, shuffle: bool = False) -> LocalData:
    """Allocate the data equally to `num_agents` agents (spec §5.1): each gets M = n // num_agents rows,
    agent k the rows k*M .. (k+1)*M - 1 of the (optionally shuffled) data, and the last
    n - num_agents * M rows (fewer than num_agents) are DROPPED so that all agents hold M samples
    (e.g. 8 agents: ijcnn1 drops 6 rows, MNIST 0/1 drops 1, Fashion-MNIST 0/1 none).
    With shuffle=True the rows are permuted first by `rng` (a Generator or a seed; required, so the
    split is reproducible); the spec's default split is shuffle with a fixed seed."""
    is_integer = isinstance(num_agents, (int, np.integer)) and not isinstance(num_agents, bool)
    if not (is_integer and 1 <= num_agents <= dataset.num_samples):
        raise InvalidParameterError(
            f"num_agents must be an integer in [1, n = {dataset.num_samples}] (equal split, spec §5.1); got {num_agents!r}"
        )
    order = np.arange(dataset.num_samples)
    if shuffle:
        if rng is None:
            raise InvalidParameterError("shuffle=True needs rng (a numpy Generator or a seed) so the split is reproducible")
        order = np.random.default_rng(rng).permutation(order)
    per_agent = dataset.num_samples // num_agents
    order = order[: per_agent * num_agents]
    features = dataset.features[order].reshape(num_agents, per_agent, dataset.dim)
    targets = dataset.labels[order].reshape(num_agents, per_agent)
    return LocalData(features, targets)
