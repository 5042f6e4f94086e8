"""Printing for people at a terminal: a console that fits tables to the width, and progress bars."""
