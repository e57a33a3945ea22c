"""Backbone builders, one submodule per architecture."""
