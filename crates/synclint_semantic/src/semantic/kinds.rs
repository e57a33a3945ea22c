//! What a value is: the lattice the semantic model infers for every expression, and the
//! shape of what a function returns ([`Returned`]). It imports no other module of `semantic`.

use ruff_text_size::{TextRange, TextSize};

/// Where a tensor lives, as far as the code shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub enum Device {
    Cuda,
    Cpu,
    /// Could be either (`.to(device)` with a device from a parameter, a model output, ...).
    Unknown,
}

impl Device {
    pub fn join(self, other: Device) -> Device {
        if self == other { self } else { Device::Unknown }
    }

    /// The device of an elementwise op on two tensors: a CUDA operand makes the result CUDA
    /// (a CPU 0-dim operand is allowed), two CPU operands keep it on the CPU.
    pub fn combine(self, other: Device) -> Device {
        match (self, other) {
            (Device::Cuda, _) | (_, Device::Cuda) => Device::Cuda,
            (Device::Cpu, Device::Cpu) => Device::Cpu,
            _ => Device::Unknown,
        }
    }
}

/// Where a host batch came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub enum BatchSource {
    NotABatch,
    /// A loader whose construction the model cannot see (`for b in train_loader:` of a parameter).
    UnknownLoader,
    /// The `DataLoader(...)` call starting at this offset.
    Loader(#[bincode(with_serde)] TextSize),
    /// What a tokenizer or processor returns with `return_tensors="pt"`: tensors it made on the
    /// CPU, by name (`inputs.input_ids`, `inputs["pixel_values"]`).
    Encoded,
    /// What a network returns: a tensor, or an output whose fields are tensors on its device
    /// (`outputs.logits`, `out["loss"]`).
    Output,
}

impl BatchSource {
    fn join(self, other: BatchSource) -> BatchSource {
        match (self, other) {
            (a, b) if a == b => a,
            (BatchSource::NotABatch, other) | (other, BatchSource::NotABatch) => other,
            _ => BatchSource::UnknownLoader,
        }
    }
}

/// Facts about one tensor value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub struct TensorFacts {
    pub device: Device,
    /// dtype is `torch.bool` (a mask).
    pub boolean: bool,
    /// dtype is known to be an integer type: an index tensor (`randint`, `argmax`, `.long()`,
    /// `topk(...).indices`).
    pub integer: bool,
    /// Its shape depends on its data: from nonzero / unique / masked_select / `x[mask]`.
    pub data_dependent: bool,
    /// Page-locked host memory (`pin_memory()`, a `pin_memory=True` DataLoader).
    pub pinned: bool,
    /// Came from a DataLoader (host batches that are copied to the GPU every step).
    pub batch: BatchSource,
}

impl TensorFacts {
    pub const fn on(device: Device) -> Self {
        TensorFacts {
            device,
            boolean: false,
            integer: false,
            data_dependent: false,
            pinned: false,
            batch: BatchSource::NotABatch,
        }
    }

    /// A host batch from a DataLoader.
    /// A loader's batch or an encoding: host data read by field.
    pub fn is_batch(self) -> bool {
        !matches!(self.batch, BatchSource::NotABatch | BatchSource::Output)
    }

    /// Its fields are tensors like it (`batch.input_ids`, `outputs.logits`).
    pub fn has_tensor_fields(self) -> bool {
        self.batch != BatchSource::NotABatch
    }

    pub fn join(self, other: TensorFacts) -> TensorFacts {
        TensorFacts {
            device: self.device.join(other.device),
            boolean: self.boolean && other.boolean,
            integer: self.integer && other.integer,
            // Only when every path (or element) is: a rule on data-dependent shapes stays quiet
            // when unsure.
            data_dependent: self.data_dependent && other.data_dependent,
            pinned: self.pinned && other.pinned,
            batch: self.batch.join(other.batch),
        }
    }

    /// A plain numeric result on the same device (arithmetic, reductions, casts) whose dtype
    /// is not known to be an integer one.
    pub fn numeric(self) -> TensorFacts {
        TensorFacts {
            boolean: false,
            integer: false,
            pinned: false,
            ..self
        }
    }

    /// An integer (index) result on the same device.
    pub fn integer(self) -> TensorFacts {
        TensorFacts {
            integer: true,
            ..self.numeric()
        }
    }

    pub fn boolean(self) -> TensorFacts {
        TensorFacts {
            boolean: true,
            integer: false,
            pinned: false,
            ..self
        }
    }

    pub fn with_device(self, device: Device) -> TensorFacts {
        TensorFacts {
            device,
            pinned: false,
            batch: if device == Device::Cuda {
                BatchSource::NotABatch
            } else {
                self.batch
            },
            ..self
        }
    }

    /// Could this tensor live on a CUDA device?
    pub fn may_be_cuda(self) -> bool {
        self.device != Device::Cpu
    }
}

/// An optimizer constructor the model saw (`AdamW(model.parameters(), lr=...)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub struct OptimizerFacts {
    /// `fused=True` was passed.
    pub fused: bool,
    /// `capturable=` was passed anything but a literal `False`: its step counts may live on
    /// the GPU.
    pub capturable: bool,
    /// Adam or AdamW, which have a fused implementation GradScaler can step without syncing.
    pub adam_family: bool,
    /// The constructor call, so a fix can add `fused=True`.
    #[bincode(with_serde)]
    pub constructor: TextRange,
}

/// What kind of `nn.Module` a value is, where rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub enum ModuleKind {
    Plain,
    /// A loss module (`nn.MSELoss()`, a local class named `*Loss`).
    Loss,
    /// `nn.CrossEntropyLoss` / `nn.NLLLoss`: they take `ignore_index`.
    ClassIndexLoss,
    /// `nn.CTCLoss`.
    CtcLoss,
    /// A torchmetrics metric (`class Dice(torchmetrics.Metric)`): its `update` runs on every
    /// batch.
    Metric,
}

impl ModuleKind {
    /// Made only by its torch constructor (no local class is one), so a file that never calls
    /// that constructor holds none.
    pub fn only_from_torch_constructor(self) -> bool {
        matches!(self, ModuleKind::ClassIndexLoss | ModuleKind::CtcLoss)
    }
}

/// A class of the project, by its index in the file's table of class references
/// ([`ClassRef`](super::ClassRef)).
pub type ClassRefId = u32;

/// What a value is, as far as the code shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, bincode::Encode, bincode::Decode)]
pub enum Kind {
    #[default]
    Unknown,
    Tensor(TensorFacts),
    /// Several tensors: `torch.where(c)`, `nonzero(as_tuple=True)`, `model.parameters()`.
    TensorSequence(TensorFacts),
    NdArray,
    /// A Python int, float or bool.
    Number,
    Str,
    List,
    /// A list of Python numbers, or of such lists (`[0, 2]`, `[i for i in ...]` of numbers,
    /// `t.tolist()`): as an index, host data (a list of slices indexes one dimension each).
    NumberList,
    Tuple,
    Dict,
    NoneValue,
    /// An `nn.Module` instance; of a project class where the code shows which (its methods are
    /// call-graph targets).
    Module(ModuleKind, Option<ClassRefId>),
    /// An instance of a project class not known to be an `nn.Module` (or, before the project
    /// pass, an imported class whose bases are in another file).
    Object(ClassRefId),
    Device(Device),
    Dtype,
    Optimizer(OptimizerFacts),
    GradScaler,
    /// A data loader, or what iterates its batches (`tqdm(loader)`, `iter(loader)`);
    /// `enumerated`: `enumerate(loader)`, which yields `(index, batch)`.
    DataLoader {
        pinned: bool,
        #[bincode(with_serde)]
        constructor: Option<TextRange>,
        enumerated: bool,
    },
    /// A `torch.distributions` object; `validating` unless built with `validate_args=False`;
    /// `normal` for those whose `sample()` draws with `torch.normal` (`Normal`, `LogNormal`,
    /// `HalfNormal`); `device`: where its parameters are, so where it samples (`Beta(torch.tensor([a]),
    /// ...)` and `Normal(0.0, 1.0)` sample on the CPU).
    Distribution {
        validating: bool,
        normal: bool,
        device: Device,
    },
    /// A CUDA stream or event (`torch.cuda.current_stream()`, `torch.cuda.Event()`).
    CudaSyncObject,
}

impl Kind {
    pub fn join(self, other: Kind) -> Kind {
        match (self, other) {
            _ if self == other => self,
            (Kind::NoneValue, k) | (k, Kind::NoneValue) => k,
            // A list made empty before a loop appends numbers to it, and after.
            (Kind::List, Kind::NumberList) | (Kind::NumberList, Kind::List) => Kind::NumberList,
            // A list before a loop appends tensors to it, and after.
            (Kind::List, Kind::TensorSequence(facts)) | (Kind::TensorSequence(facts), Kind::List) => {
                Kind::TensorSequence(facts)
            }
            (Kind::Tensor(a), Kind::Tensor(b)) => Kind::Tensor(a.join(b)),
            // A loader's batch (or a network's output) is a tensor or a container of tensors
            // like it: a dict, list or tuple beside it is one of its parts (a helper that
            // recurses into a batch's nested dicts passes them where the batch went).
            (Kind::Dict | Kind::List | Kind::Tuple, Kind::Tensor(facts))
            | (Kind::Tensor(facts), Kind::Dict | Kind::List | Kind::Tuple)
                if facts.has_tensor_fields() =>
            {
                Kind::Tensor(facts)
            }
            // `max_len = max_len or lengths.max()`, `if cuda: x = x.to(dev)`: a tensor that may
            // be on a GPU in one arm and a value nothing is known of in the other may be that
            // tensor, on a device no longer known. A CPU tensor joined so says nothing.
            (Kind::Tensor(a), Kind::Unknown) | (Kind::Unknown, Kind::Tensor(a)) if a.may_be_cuda() => {
                Kind::Tensor(a.with_device(a.device.join(Device::Unknown)))
            }
            // `self.s = s or Sampler()`, `s if s is not None else Sampler()`: a value nothing is
            // known of beside an instance of a project class may be that instance, so what is
            // called through it may run the class's methods (a module's call is a network's).
            (Kind::Object(class), Kind::Unknown) | (Kind::Unknown, Kind::Object(class)) => Kind::Object(class),
            (Kind::Module(module, class), Kind::Unknown) | (Kind::Unknown, Kind::Module(module, class)) => {
                Kind::Module(module, class)
            }
            (Kind::TensorSequence(a), Kind::TensorSequence(b)) => Kind::TensorSequence(a.join(b)),
            (Kind::Device(a), Kind::Device(b)) => Kind::Device(a.join(b)),
            (Kind::Module(a, class_a), Kind::Module(b, class_b)) => Kind::Module(
                if a == b { a } else { ModuleKind::Plain },
                if class_a == class_b { class_a } else { None },
            ),
            (
                Kind::DataLoader {
                    pinned: a,
                    enumerated: enumerated_a,
                    ..
                },
                Kind::DataLoader {
                    pinned: b,
                    enumerated: enumerated_b,
                    ..
                },
            ) if enumerated_a == enumerated_b => Kind::DataLoader {
                pinned: a && b,
                constructor: None,
                enumerated: enumerated_a,
            },
            _ => Kind::Unknown,
        }
    }

    /// `self or fallback`: the fallback is what the expression gives whenever `self` is false, so a
    /// number or `None` before a tensor that may be on a GPU (`max_len or lengths.max()`, where
    /// some callers pass a length and others leave it out) may be that tensor, as a value nothing
    /// is known of would be.
    pub fn join_fallback(self, fallback: Kind) -> Kind {
        match (self, fallback) {
            (Kind::Number, Kind::Tensor(facts)) if facts.may_be_cuda() => Kind::Unknown.join(fallback),
            _ => self.join(fallback),
        }
    }

    /// The kind of one element of an iterable or unpacked value (a loader's batch, a tensor's
    /// row).
    pub fn element(self) -> Kind {
        match self {
            Kind::Tensor(facts) | Kind::TensorSequence(facts) => Kind::Tensor(facts),
            Kind::NdArray => Kind::NdArray,
            Kind::DataLoader { enumerated: true, .. } => Kind::Tuple,
            Kind::DataLoader {
                pinned, constructor, ..
            } => Kind::Tensor(TensorFacts {
                pinned,
                batch: constructor.map_or(BatchSource::UnknownLoader, |range| BatchSource::Loader(range.start())),
                ..TensorFacts::on(Device::Cpu)
            }),
            _ => Kind::Unknown,
        }
    }

    /// The project class this value is an instance of, if the code shows one.
    pub fn class(self) -> Option<ClassRefId> {
        match self {
            Kind::Module(_, class) => class,
            Kind::Object(class) => Some(class),
            _ => None,
        }
    }

    /// Nothing is known about what calling it or reading it gives (an unknown value, or an
    /// instance of a project class whose methods are read elsewhere).
    pub fn is_opaque(self) -> bool {
        matches!(self, Kind::Unknown | Kind::Object(_))
    }

    pub fn tensor(self) -> Option<TensorFacts> {
        match self {
            Kind::Tensor(facts) => Some(facts),
            _ => None,
        }
    }

    /// A tensor that could live on a CUDA device.
    pub fn is_maybe_cuda_tensor(self) -> bool {
        matches!(self, Kind::Tensor(facts) if facts.may_be_cuda())
    }

    /// A value the model knows is not a CUDA tensor (CPU tensor, numpy, Python value, ...).
    pub fn is_known_host_value(self) -> bool {
        match self {
            Kind::Tensor(facts) | Kind::TensorSequence(facts) => facts.device == Device::Cpu,
            Kind::Unknown | Kind::Module(..) | Kind::Object(_) => false,
            _ => true,
        }
    }
}

/// One element of a returned tuple: a value, or a tuple of its own (`return (a, b), loss`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub enum Returned {
    Value(Kind),
    Tuple(Box<[Returned]>),
}

impl Returned {
    /// Element by element where both are tuples of one length; else what both are as values.
    pub fn join(&self, other: &Returned) -> Returned {
        match (self, other) {
            (Returned::Tuple(a), Returned::Tuple(b)) if a.len() == b.len() => {
                Returned::Tuple(a.iter().zip(b.iter()).map(|(a, b)| a.join(b)).collect())
            }
            (Returned::Value(a), Returned::Value(b)) => Returned::Value(a.join(*b)),
            _ => Returned::Value(Kind::Tuple),
        }
    }

    /// The join of two tuples' elements, where they have one length.
    pub fn join_elements(a: &[Returned], b: &[Returned]) -> Option<Box<[Returned]>> {
        (a.len() == b.len()).then(|| a.iter().zip(b).map(|(a, b)| a.join(b)).collect())
    }

    /// The same shape, each value's kind mapped (from one file's terms to another's).
    pub fn map_kinds(&self, map: &impl Fn(Kind) -> Kind) -> Returned {
        match self {
            Returned::Value(kind) => Returned::Value(map(*kind)),
            Returned::Tuple(elements) => Returned::Tuple(elements.iter().map(|e| e.map_kinds(map)).collect()),
        }
    }

    /// Whether any value, at any depth, satisfies `test`.
    pub fn any_value(&self, test: &impl Fn(Kind) -> bool) -> bool {
        match self {
            Returned::Value(kind) => test(*kind),
            Returned::Tuple(elements) => elements.iter().any(|e| e.any_value(test)),
        }
    }
}
