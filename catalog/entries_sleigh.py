"""entries_sleigh (filled in as the servo classes land)."""
