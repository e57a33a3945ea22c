from .small import build as build_backbone
from .large import build as build_large
