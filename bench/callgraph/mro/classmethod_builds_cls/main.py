"""A classmethod inherited from the base builds `cls(...)` and so runs the subclass's override, which reaches the base through `super(Class, self)`."""


class Config:
    def __init__(self, **values):
        self.values = values

    @classmethod
    def from_dict(cls, data):
        config = cls(**data)
        config.validate()
        return config

    def validate(self):
        assert all(v is not None for v in self.values.values())


class TrainConfig(Config):
    def validate(self):
        super(TrainConfig, self).validate()
        assert self.values["lr"] > 0


class EvalConfig(Config):
    def validate(self):
        assert "split" in self.values


TrainConfig.from_dict({"lr": 0.1, "epochs": 3})
