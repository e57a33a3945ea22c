from .base import Callback
