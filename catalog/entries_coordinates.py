"""entries_coordinates (filled in as the servo classes land)."""
