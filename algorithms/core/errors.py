"""Exceptions raised for invalid input. Every layer raises these (or subclasses), so a caller can
tell a user error from a harness bug. Messages say what was expected, what was given, and which
assumption or formula requires it."""


class DpverifyError(Exception):
    """Base class of every user-facing error of dpverify."""


class InvalidParameterError(DpverifyError, ValueError):
    """A parameter outside the domain a paper's formula or theorem requires (eps <= 0, tau >= 1...)."""


class InvalidGraphError(DpverifyError, ValueError):
    """A network that violates an assumption: disconnected, asymmetric, not doubly stochastic..."""


class InvalidDataError(DpverifyError, ValueError):
    """Data with NaN/inf, mismatched dimensions, or values outside a declared bound."""


class NotInContract(DpverifyError, ValueError):
    """A run whose parameters the paper's contract (algorithms/<paper>/contract.py) cannot hand to an
    implementation, e.g. a reading or a mirror map the contract's setting does not state."""


class ImplementationError(DpverifyError):
    """A user's implementation (`dpverify verify`) raised, or returned something that is not a transcript."""
