"""A decorator applied to a method: calling the method through an instance runs the wrapper, which calls the method with self; an undecorated method is called directly."""

import functools


def check_input(method):
    @functools.wraps(method)
    def wrapper(self, x):
        if x is None:
            raise ValueError("input is None")
        return method(self, x)
    return wrapper


class Model:
    @check_input
    def forward(self, x):
        return self.project(x)

    def project(self, x):
        return x * 0.5

    def predict(self, x):
        return x > 0


def main():
    model = Model()
    return model.forward(4.0)


main()
