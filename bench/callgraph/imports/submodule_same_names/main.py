"""`import models.resnet` and `from models import vit as vit_module` reach two same-named `build` functions in different submodules."""
import models.resnet
from models import vit as vit_module


def build_backbones():
    cnn = models.resnet.build(2)
    transformer = vit_module.build(3)
    return cnn + transformer


backbones = build_backbones()
