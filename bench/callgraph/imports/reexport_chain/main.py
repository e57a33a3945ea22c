"""Names re-exported through two `__init__.py` files and an `import a.b.c as c` alias resolve to the modules that define them."""
import zoo
import zoo.heads.classifier as clf

model = zoo.create_model("tiny")
out = model.forward("!")
probe = clf.LinearHead("probe").forward("?")
