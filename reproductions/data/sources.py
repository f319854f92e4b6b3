"""Where the dataset files come from, and whether they are the files the checksums describe.

A dataset is looked for, in this order, in (1) `--data-dir` / `$DPVERIFY_DATA`, (2) the checkout's `../shared/data`
(relative to the project root; absent in a plain clone or an installed package), (3) dpverify's download cache
`pooch.os_cache("dpverify")`. When none holds it and a public source with a published checksum is known (SOURCES),
pooch fetches it into the cache: one attempt per process, a short timeout, no retries, nothing when
`$DPVERIFY_OFFLINE` is set. Otherwise the dataset is "not available" with a reason that names the files, their
checksum and how to provide them. Nothing here ever substitutes other data.

Checksums: a directory's own SHA256SUMS, when it lists a file, is the reference; otherwise the sha256 of the shared
copies (PUBLISHED_SHA256, = shared/data/SHA256SUMS); a file neither lists (CIFAR-10, covtype: no checksum is published
by the spec or the seeds) is read unverified and the sha256 of what was read is recorded.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpverify.algorithms.core.errors import DpverifyError, InvalidDataError

DATA_ENV = "DPVERIFY_DATA"
OFFLINE_ENV = "DPVERIFY_OFFLINE"
CHECKSUM_FILE = "SHA256SUMS"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA_DIR = PROJECT_ROOT.parent / "shared" / "data"
CACHE_NAME = "dpverify"
DOWNLOAD_TIMEOUT_SECONDS = 10   # one attempt per file and process: without a network it fails in well under a second
NOT_AVAILABLE = "data not available"   # the status of a result row without data; such results are never cached
NOTHING_RUN = "Nothing run: none of the datasets is available"   # what a figure or table without any data shows
PROVIDE = f"provide it with --data-dir DIR or {DATA_ENV}=DIR"
_HASH_CHUNK = 1 << 20
MESSAGE_CHARS = 160   # of a download error kept in the reason (requests' messages run to several hundred)

CIFAR10_DIRNAME = "cifar-10-batches-py"
CIFAR10_NUM_BATCHES = 5
IJCNN1_FILE = "ijcnn1.trn.bz2"
COVTYPE_FILE = "covtype.libsvm.binary.bz2"   # LIBSVM binary data sets, covtype.binary


def _image_files(folder: str) -> tuple[str, ...]:
    return (f"{folder}/train-images-idx3-ubyte.gz", f"{folder}/train-labels-idx1-ubyte.gz")


# The files each dataset reads, relative to a data directory. CIFAR-10's batches may also sit directly in it.
DATASET_FILES: dict[str, tuple[str, ...]] = {
    "ijcnn1": (IJCNN1_FILE,),
    "mnist": _image_files("mnist"),
    "fashion-mnist": _image_files("fashion-mnist"),
    "cifar10": tuple(f"{CIFAR10_DIRNAME}/data_batch_{k}" for k in range(1, CIFAR10_NUM_BATCHES + 1)),
    "covtype": (COVTYPE_FILE,),
    "mnist-v0": _image_files("mnist"),
}
DESCRIPTIONS = {
    "ijcnn1": "LIBSVM ijcnn1 training set (ijcnn1.tr + ijcnn1.val, svmlight, bzip2)",
    "mnist": "MNIST training set (IDX, gzip)",
    "fashion-mnist": "Fashion-MNIST training set (IDX, gzip)",
    "cifar10": "the python version of CIFAR-10 (pickle batches)",
    "covtype": "LIBSVM covtype.binary (svmlight, bzip2)",
    "mnist-v0": "MNIST training set (IDX, gzip)",
}
DISPLAY_NAMES = {"cifar10": "CIFAR-10", "fashion-mnist": "Fashion-MNIST", "mnist": "MNIST", "mnist-v0": "MNIST (v0)"}

# sha256 of the shared copies (shared/data/SHA256SUMS; origin in shared/data/README.md)
PUBLISHED_SHA256 = {
    IJCNN1_FILE: "b38a4198ce142d43e96fb86d17b87211feec1f909ac344fa057455c69de29de3",
    "mnist/train-images-idx3-ubyte.gz": "0b367032e93c5d0cea0925647cfdb18614af8ee15f83e6f2fc2ad904a6835971",
    "mnist/train-labels-idx1-ubyte.gz": "1787548bbe0bff1ec2ecdc0ef292b02df999e2d1a6002d27500982c652b17203",
    "fashion-mnist/train-images-idx3-ubyte.gz": "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7",
    "fashion-mnist/train-labels-idx1-ubyte.gz": "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056",
}


@dataclass(frozen=True)
class Source:
    """A public file a dataset is fetched from, and the checksum its download must have."""

    url: str
    known_hash: str   # as pooch reads it: "sha256:..." or "md5:..."
    checksum_from: str
    archive: bool = False   # a .tar.gz unpacked into the cache (its members keep their folder)


# Only sources that serve files with a published checksum. MNIST and Fashion-MNIST have none: the shared copies
# are re-compressed (their uncompressed bytes are the official ones), so no public URL serves those sha256s.
# covtype has none: LIBSVM publishes no checksum a download could be verified against.
SOURCES = {
    "ijcnn1": Source("https://raw.githubusercontent.com/X-DataInitiative/tick-datasets/"
                     "9d959b6e53e17145e93e9849ff1f9f6d2de8ae51/binary/ijcnn1/ijcnn1.trn.bz2",
                     f"sha256:{PUBLISHED_SHA256[IJCNN1_FILE]}",
                     "the shared copy's sha256 (the tick-datasets file at that commit is byte-identical)"),
    "cifar10": Source("https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz", "md5:c58f30108f718f92721af3b95e74349a",
                      "the md5 published on https://www.cs.toronto.edu/~kriz/cifar.html", archive=True),
}


class DatasetNotAvailableError(DpverifyError):
    """A data directory or data file that is not there."""


class ChecksumMismatchError(DpverifyError):
    """A data file whose SHA-256 differs from the one its SHA256SUMS (or dpverify's published list) gives."""


# --------------------------------------------------------------------------------------------------
# How paths are shown: reports carry no absolute prefix of the machine that wrote them


def shown(path) -> str:
    """Under $DPVERIFY_DATA as "$DPVERIFY_DATA/...", under the checkout's parent relative to the checkout, under the
    home directory as "~/...", anything else as given."""
    path = Path(path)
    configured = os.environ.get(DATA_ENV, "").strip()
    if configured and path.is_absolute():
        base = Path(configured).expanduser().resolve()
        if path.resolve() == base or base in path.resolve().parents:
            return str(Path(f"${DATA_ENV}") / path.resolve().relative_to(base))
    if path.is_absolute() and (path == PROJECT_ROOT.parent or PROJECT_ROOT.parent in path.parents):
        return os.path.relpath(path, PROJECT_ROOT)
    home = Path.home()
    if path.is_absolute() and home in path.parents:
        return str(Path("~") / path.relative_to(home))
    return str(path)


# --------------------------------------------------------------------------------------------------
# Candidate directories, and the download cache


def cache_dir() -> Path:
    import pooch

    return Path(pooch.os_cache(CACHE_NAME))


def offline() -> bool:
    return os.environ.get(OFFLINE_ENV, "").strip() not in ("", "0")


def _candidates() -> tuple[list[Path], list[str]]:
    """The directories to look in, in order, and what was wrong with the ones skipped."""
    directories, skipped = [], []
    configured = os.environ.get(DATA_ENV, "").strip()
    if configured:
        path = Path(configured).expanduser()
        if path.is_dir():
            directories.append(path)
        else:
            skipped.append(f"{DATA_ENV}={configured} is not a directory")
    if SHARED_DATA_DIR.is_dir():
        directories.append(SHARED_DATA_DIR)
    else:
        skipped.append(f"{shown(SHARED_DATA_DIR)} does not exist")
    directories.append(cache_dir())
    return directories, skipped


def batch_directory(base: Path) -> Path | None:
    """Where CIFAR-10's batches are under `base`: base/cifar-10-batches-py or base itself."""
    for candidate in (base / CIFAR10_DIRNAME, base):
        if (candidate / "data_batch_1").is_file():
            return candidate
    return None


def _holds(base: Path, name: str) -> bool:
    if name == "cifar10":
        return batch_directory(base) is not None
    return all((base / file).is_file() for file in DATASET_FILES[name])


def files_read(name: str, base: Path) -> list[str]:
    """The files (relative to `base`) that the loader of `name` reads there."""
    if name != "cifar10":
        return list(DATASET_FILES[name])
    batches = batch_directory(base)
    if batches is None:
        return []
    prefix = "" if batches == base else f"{CIFAR10_DIRNAME}/"
    return [f"{prefix}data_batch_{k}" for k in range(1, CIFAR10_NUM_BATCHES + 1)
            if (batches / f"data_batch_{k}").is_file()]


_failed_downloads: dict[str, str] = {}   # url -> why, this process: a failed fetch is not tried again


def _download(name: str) -> str:
    """Fetch `name` into the cache; '' on success, else why not (one attempt per process)."""
    source = SOURCES[name]
    if source.url in _failed_downloads:
        return _failed_downloads[source.url]
    import pooch

    pooch.get_logger().setLevel(logging.WARNING)   # no "Downloading ..." lines in the reports' logs
    target = DATASET_FILES[name][0] if not source.archive else source.url.rsplit("/", 1)[1]
    try:
        pooch.retrieve(source.url, source.known_hash, fname=Path(target).name, path=cache_dir() / Path(target).parent,
                       processor=pooch.Untar(extract_dir=".") if source.archive else None,
                       downloader=pooch.HTTPDownloader(timeout=DOWNLOAD_TIMEOUT_SECONDS, progressbar=False))
        return ""
    # no network or a refused connection (requests raises OSErrors), a checksum mismatch (ValueError), a broken archive
    except (OSError, ValueError, tarfile.TarError) as error:
        first_line = str(error).splitlines()[0] if str(error) else ""
        shortened = first_line if len(first_line) <= MESSAGE_CHARS else first_line[:MESSAGE_CHARS] + "..."
        why = f"download of {source.url} failed ({type(error).__name__}: {shortened})"
        _failed_downloads[source.url] = why
        return why


def _needs(name: str) -> str:
    files = DATASET_FILES[name]
    if name == "cifar10":
        listed = f"{CIFAR10_DIRNAME}/data_batch_1..{CIFAR10_NUM_BATCHES}"
    else:
        listed = ", ".join(f"{f} (sha256 {PUBLISHED_SHA256[f]})" if f in PUBLISHED_SHA256 else f for f in files)
    checksum = "" if any(f in PUBLISHED_SHA256 for f in files) else "; no checksum is published: the sha256 of what is read is recorded"
    return f"{listed}: {DESCRIPTIONS[name]}{checksum}"


def locate(name: str, data_dir=None, download: bool = True) -> Path:
    """The directory holding `name`'s files: `data_dir` if given (only there), else the first candidate
    (module docstring), fetching into the cache if allowed. Raises DatasetNotAvailableError saying why."""
    label = f"{DISPLAY_NAMES.get(name, name)} data not available"
    if data_dir is not None:
        base = Path(data_dir)
        if _holds(base, name):
            return base
        where = f"{shown(base)} does not exist" if not base.is_dir() else f"not found in {shown(base)}"
        raise DatasetNotAvailableError(f"{label}: needs {_needs(name)}; {where}")
    directories, skipped = _candidates()
    for base in directories:
        if _holds(base, name):
            return base
    fetched = "no public source with a published checksum is known"
    if name in SOURCES:
        if offline():
            fetched = f"download from {SOURCES[name].url} disabled ({OFFLINE_ENV} is set)"
        elif not download:
            fetched = _failed_downloads.get(SOURCES[name].url, f"not downloaded yet from {SOURCES[name].url}")
        else:
            fetched = _download(name)
            if not fetched and _holds(cache_dir(), name):
                return cache_dir()
    looked = "; ".join(skipped + [f"not in {', '.join(shown(d) for d in directories)}", fetched])
    raise DatasetNotAvailableError(f"{label}: needs {_needs(name)}; {looked}; {PROVIDE}")


# --------------------------------------------------------------------------------------------------
# Checksums


def read_checksums(data_dir: Path) -> dict[str, str]:
    """{relative path: sha256} from data_dir/SHA256SUMS ({} without one)."""
    sums_path = Path(data_dir) / CHECKSUM_FILE
    if not sums_path.is_file():
        return {}
    expected = {}
    for number, line in enumerate(sums_path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        digest, _, name = line.strip().partition(" ")
        name = name.strip().removeprefix("*")  # "*" marks binary mode in sha256sum output
        if len(digest) != 64 or not name:
            raise InvalidDataError(f"{sums_path}:{number}: expected '<sha256 hex>  <relative path>'; got {line!r}")
        expected[name] = digest.lower()
    return expected


@functools.lru_cache(maxsize=64)
def _sha256(path: str, size: int, modified_ns: int) -> str:   # keyed by size and mtime: a replaced file is re-read
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_file(path) -> str:
    status = Path(path).stat()
    return _sha256(str(path), status.st_size, status.st_mtime_ns)


def checked_sha256(base: Path, relative: str) -> tuple[str, str]:
    """(sha256 of base/relative, what verified it: '' when nothing lists it). Raises ChecksumMismatchError when
    base/SHA256SUMS, or else dpverify's published list, gives another sha256."""
    path = base / relative
    if not path.is_file():
        raise DatasetNotAvailableError(f"data file {relative} not found in {shown(base)} (expected at {shown(path)})")
    actual = sha256_file(path)
    listed = read_checksums(base).get(relative)
    expected, reference = ((listed, f"{CHECKSUM_FILE} in {shown(base)}") if listed else
                           (PUBLISHED_SHA256.get(relative), "dpverify's published checksums"))
    if expected is None:
        return actual, ""
    if actual != expected:
        raise ChecksumMismatchError(f"checksum mismatch for {shown(path)}: expected sha256 {expected} ({reference}), "
                                    f"got {actual} (the file is corrupted or is not the published one)")
    return actual, reference


def fingerprint(name: str) -> Any:
    """What `name`'s data would change in a result: {file: sha256} of the files read, or why it is not available.
    Part of the cache key of every task that reads it (runner.cache_key); may fetch the data (locate)."""
    try:
        base = locate(name)
        return {relative: sha256_file(base / relative) for relative in files_read(name, base)}
    except DatasetNotAvailableError:
        return NOT_AVAILABLE


def task_datasets(params) -> list[str]:
    """The datasets a task's parameters name (the `dataset` parameter of the DP-RECAL tasks)."""
    named = params.get("dataset") if hasattr(params, "get") else None
    return [named] if isinstance(named, str) and named in DATASET_FILES else []


def is_not_available(frame) -> bool:
    """A task result that says its data was not available (it must not be cached: the data may appear)."""
    status = getattr(frame, "columns", ())
    return "status" in status and frame["status"].astype(str).str.startswith(NOT_AVAILABLE).any()
