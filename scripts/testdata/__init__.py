"""Builders of the test model zoos written by scripts/make_testdata.py."""
