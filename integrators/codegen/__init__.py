"""codegen: writes source text only - the one code writer (straight-line component code), its exponentials, the
programs of a method (one step, the fixed-step loop, the adaptive loop), the ensembles' variants, the Casimir
projection's polynomials and the so(3) straight-line steppers."""
