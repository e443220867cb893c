"""Slow, plainly correct reference implementations used only by the tests."""
