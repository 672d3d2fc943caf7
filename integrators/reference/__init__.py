"""reference: the numpy reference steppers, the definition of correct that generated code is tested against -
one step of each method family, the Moser-Veselov map, the pairs' continuous extensions (dense output), and the
plain helpers (formulas in floats and arrays) that the generated code calls."""
