"""Basis factorisation for the revised simplex: LU plus product-form updates.

The basis ``B = A[:, basis]`` is held as ``B = B0 E1 ... Ek``: an LU factor of
the basis at the last refactorisation (``scipy.linalg.lu_factor`` for dense
``A``, ``scipy.sparse.linalg.splu`` for sparse ``A``) and one eta matrix per
pivot since (product form of the inverse).  ``Ei`` is the identity with column
``r`` replaced by ``d = B_{i-1}^{-1} a_q``, the entering column in the old
basis.  After ``refactor_every`` updates the basis is factorised afresh.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla


class SingularBasisError(np.linalg.LinAlgError):
    """The chosen columns do not form a nonsingular basis."""


class BasisFactor:
    """LU factor of ``A[:, basis]`` with product-form (eta) updates.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix, shape (m, n)
    basis : int array, shape (m,)
    refactor_every : int
        Number of eta updates after which the basis is refactorised.
    singular_tol : float
        A basis whose smallest |U_ii| is below ``singular_tol * max |U_ii|``
        is rejected as singular.
    """

    def __init__(self, A, basis, refactor_every: int = 64, singular_tol: float = 1e-11):
        self.A = A.tocsc() if sp.issparse(A) else np.asarray(A, dtype=float)
        self.sparse = sp.issparse(self.A)
        self.m = self.A.shape[0]
        self.refactor_every = int(refactor_every)
        self.singular_tol = float(singular_tol)
        self.refactor(basis)

    def columns(self, cols) -> np.ndarray:
        """Dense ``A[:, cols]`` (a vector for a single column index)."""
        sub = self.A[:, cols]
        if self.sparse:
            sub = sub.toarray()
            return sub.ravel() if np.ndim(cols) == 0 else sub
        return sub

    def refactor(self, basis=None) -> None:
        """Factorise ``A[:, basis]`` afresh (default: the current basis) and drop the etas."""
        basis = self.basis if basis is None else np.array(basis, dtype=np.intp)
        if basis.shape != (self.m,):
            raise ValueError(f"a basis needs {self.m} columns, got shape {basis.shape}")
        self._etas: list[tuple[int, np.ndarray]] = []
        if self.m == 0:
            self.basis, self._lu = basis, None
            return
        if self.sparse:
            try:
                lu = spla.splu(self.A[:, basis].tocsc())
            except RuntimeError as err:  # "Factor is exactly singular"
                raise SingularBasisError(str(err)) from None
            diag = lu.U.diagonal()
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", sla.LinAlgWarning)
                lu = sla.lu_factor(self.A[:, basis], check_finite=False)
            diag = np.diag(lu[0])
        mag = np.abs(diag)
        if not np.all(np.isfinite(mag)) or mag.min() <= self.singular_tol * max(1.0, mag.max()):
            raise SingularBasisError("basis matrix is singular")
        self.basis, self._lu = basis, lu

    @property
    def n_updates(self) -> int:
        """Eta updates since the last refactorisation."""
        return len(self._etas)

    def _lu_solve(self, v, trans: bool):
        if self.sparse:
            return self._lu.solve(v, trans="T" if trans else "N")
        return sla.lu_solve(self._lu, v, trans=1 if trans else 0, check_finite=False)

    def solve(self, v) -> np.ndarray:
        """FTRAN: ``B^{-1} v`` for a vector or an (m, k) matrix."""
        x = np.array(v, dtype=float)
        if self.m == 0:
            return x
        x = self._lu_solve(x, trans=False)
        for r, d in self._etas:
            xr = x[r] / d[r]
            x -= np.multiply.outer(d, xr)
            x[r] = xr
        return x

    def solve_transpose(self, v) -> np.ndarray:
        """BTRAN: ``B^{-T} v`` for a vector."""
        y = np.array(v, dtype=float)
        if self.m == 0:
            return y
        for r, d in reversed(self._etas):
            y[r] = (y[r] - (d @ y - d[r] * y[r])) / d[r]
        return self._lu_solve(y, trans=True)

    def update(self, r: int, q: int, d: np.ndarray) -> bool:
        """Replace basis position ``r`` by column ``q``; ``d = B^{-1} a_q`` (before the update).

        Returns True when the update triggered a refactorisation.
        """
        if not abs(d[r]) > 0.0:
            raise SingularBasisError("zero pivot element")
        self.basis = self.basis.copy()
        self.basis[r] = q
        if len(self._etas) + 1 >= self.refactor_every:
            self.refactor()
            return True
        self._etas.append((int(r), np.array(d, dtype=float)))
        return False

    def residual(self, x_B, rhs) -> float:
        """``max |B x_B - rhs|``: the check that decides an early refactorisation."""
        if self.m == 0:
            return 0.0
        return float(np.max(np.abs(self.A[:, self.basis] @ x_B - rhs)))
