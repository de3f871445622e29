"""The installed version, read from the package metadata on first use (``admmcheck.__version__``): reading it
costs ~50 ms of ``importlib.metadata``, which the processes that never ask (an audit's supervisors and workers)
do not pay."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("admmcheck")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "unknown"
