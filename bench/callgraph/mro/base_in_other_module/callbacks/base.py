class Callback:
    def on_train_begin(self, trainer):
        self.on_setup(trainer)
        return self.describe()

    def on_setup(self, trainer):
        pass

    def describe(self):
        return type(self).__name__
