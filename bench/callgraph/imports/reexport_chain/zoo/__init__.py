from .registry import create_model
