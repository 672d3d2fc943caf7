"""integrators: geometry-preserving integrators on two problem protocols (plain ODE and coadjoint ODE
on g*), group reconstruction, event location and the comparison harness."""

from .problems import CoadjointProblem, ODEProblem, ReconstructionProblem

__all__ = ["ODEProblem", "CoadjointProblem", "ReconstructionProblem"]
