"""`globals()[...]` looks a builder function up by a name built at run time; a builder never named is not called."""


def build_resnet(depth):
    return f"resnet{depth}"


def build_vit(depth):
    return f"vit{depth}"


def build_mlp(depth):
    return f"mlp{depth}"


def build_model(arch, depth):
    builder = globals()[f"build_{arch}"]
    return builder(depth)


build_model("resnet", 18)
build_model("vit", 12)
