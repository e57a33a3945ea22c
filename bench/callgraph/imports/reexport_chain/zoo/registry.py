from .backbones import build_backbone
from .heads.classifier import LinearHead as Head


def create_model(name):
    backbone = build_backbone(name)
    return Head(backbone)
