"""geometry: the spaces the Lie-group methods act on (generator, action, bracket, dexp^-1), the relation of ad_x
found from the structure constants, and the recognition of a problem's structure from its data."""
