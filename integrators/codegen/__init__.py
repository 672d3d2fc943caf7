"""codegen: writes source text only - the one code writer (source_text.Lines, extended by writer.Source:
straight-line component code), its exponentials and its one dexp^-1, the programs of a method (one step, the
fixed-step loop, the adaptive loop; Runge-Kutta tableaux, commutator-free methods, McLachlan's splitting), the
ensembles' variants and module texts, the Casimir projection's polynomials."""
