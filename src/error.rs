//! One error type for every refusal, each variant naming the axis and the values involved.

use thiserror::Error;

use crate::mode::Mode;

/// Why a pad was refused. Every bad request comes back as one of these, never a panic.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PadError {
    /// The mode is none of [`Mode::ALL`](crate::Mode::ALL).
    #[error("invalid mode {mode:?}: expected {}", crate::mode::Mode::names())]
    InvalidMode {
        /// The mode as given.
        mode: String,
    },
    /// The pads list does not have two entries per padded axis.
    #[error("pads has {len} values ({shape}), expected {expected}: a begin and an end for each of {axes} axes")]
    PadsLength {
        /// Number of values given.
        len: usize,
        /// The pads tensor's shape as given, e.g. `shape [3]`.
        shape: String,
        /// Number of values expected.
        expected: usize,
        /// Number of axes padded (the rank, or the length of `axes`).
        axes: usize,
    },
    /// An axis outside `[-rank, rank - 1]`.
    #[error("axis {axis} is out of range for rank {rank} (allowed {min}..={max})", min = -(*rank as i64), max = *rank as i64 - 1)]
    AxisOutOfRange {
        /// The axis as given.
        axis: i64,
        /// The input's rank.
        rank: usize,
    },
    /// The same axis named twice.
    #[error("axis {axis} is repeated (entries {first} and {second} of axes both name it)")]
    RepeatedAxis {
        /// The axis, made non-negative.
        axis: usize,
        /// Index in `axes` of the first mention.
        first: usize,
        /// Index in `axes` of the second mention.
        second: usize,
    },
    /// `n + begin + end < 0` on an axis.
    #[error("axis {axis}: input length {len} with pads begin {begin}, end {end} gives output length {out} < 0")]
    NegativeOutputDim {
        /// The axis.
        axis: usize,
        /// Input length on that axis.
        len: u64,
        /// Begin pad.
        begin: i64,
        /// End pad.
        end: i64,
        /// The (negative) output length.
        out: i128,
    },
    /// Interior padding that cannot be used: the wrong number of counts, a negative one, one
    /// with a mode other than constant, or a dilated axis cropped below zero.
    #[error("interior padding {interior:?}: {reason}")]
    Interior {
        /// The counts as given.
        interior: Vec<i64>,
        /// What is wrong, naming the axis.
        reason: String,
    },
    /// A non-constant mode asked to extend an axis with nothing left after cropping.
    #[error("{mode} pad on axis {axis}: nothing left to {verb} after cropping {cropped} of {len} elements (output length {out})", verb = mode.verb())]
    EmptyAxis {
        /// The mode.
        mode: Mode,
        /// The axis.
        axis: usize,
        /// Input length on that axis.
        len: u64,
        /// Elements removed by negative pads (capped at the length).
        cropped: u64,
        /// The output length that would need filling.
        out: u64,
    },
    /// The constant value has the wrong type or element count, or cannot be converted.
    #[error("constant value: {reason}")]
    ConstantValue {
        /// What is wrong with it.
        reason: String,
    },
    /// A mode, data type or input that the declared operator version does not have.
    #[error("{what} is not in {form} ({hint})")]
    NotInVersion {
        /// The mode, type or input, e.g. `mode wrap`.
        what: String,
        /// The operator form and version, e.g. `ONNX Pad-18`.
        form: String,
        /// Where it first appears, or how to accept it anyway.
        hint: String,
    },
    /// An operator form's input has the wrong type or shape (pads not int64, axes not 1-D, ...).
    #[error("{form}: input {input}: {reason}")]
    InvalidInput {
        /// The operator form and version.
        form: String,
        /// The input's name.
        input: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// Tensor data that does not fit its shape and type.
    #[error("tensor of type {dtype} and shape {shape:?}: {reason}")]
    InvalidTensor {
        /// The type's name.
        dtype: &'static str,
        /// The shape.
        shape: Vec<u64>,
        /// What is wrong.
        reason: String,
    },
    /// An unknown data type name.
    #[error(
        "unknown data type {name:?}: the types are {}; also accepted: {}",
        crate::DataType::names(),
        crate::DataType::ALIASES
    )]
    UnknownDataType {
        /// The name as given.
        name: String,
    },
    /// A request too large for the path, the device or the configured limit.
    #[error("too large: {what}")]
    TooLarge {
        /// What, how large, and the limit.
        what: String,
    },
    /// The output needs more bytes than the request allows
    /// ([`PadRequest::max_output_bytes`](crate::PadRequest::max_output_bytes)). The limit is a
    /// field, so that a front end can name its own setting (the CLI: `--max-output-bytes`).
    #[error("too large: {what}, over the limit of {limit} bytes (max_output_bytes)")]
    OutputLimit {
        /// What needs how many bytes.
        what: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// A name prefix for generated WGSL that is not the start of a WGSL name.
    #[error("prefix {prefix:?}: {reason}")]
    InvalidPrefix {
        /// The prefix given.
        prefix: String,
        /// What a prefix must be.
        reason: String,
    },
    /// The data type is not handled by this entry point (e.g. strings on a GPU buffer).
    #[error("{dtype} is not supported here: {reason}")]
    Unsupported {
        /// The type's name.
        dtype: &'static str,
        /// Why, and what to use instead.
        reason: String,
    },
    /// A caller's GPU buffer is too small for the range it must hold.
    #[error("{which} buffer too small: needs {needed} bytes from offset {offset}, buffer has {size}")]
    BufferTooSmall {
        /// The input's or the output's.
        which: Side,
        /// Bytes needed.
        needed: u64,
        /// Offset into the buffer.
        offset: u64,
        /// The buffer's size.
        size: u64,
    },
    /// A caller's GPU buffer offset that is not a multiple of the element's size.
    #[error("{which} buffer offset {offset} is not a multiple of {alignment}, the element's size in bytes")]
    MisalignedOffset {
        /// The input's or the output's.
        which: Side,
        /// The offset.
        offset: u64,
        /// The required alignment.
        alignment: u64,
    },
    /// A caller's GPU buffer lacks a usage the pad needs.
    #[error("{which} buffer lacks usage {usage} (it has {has})")]
    BufferUsage {
        /// The input's or the output's.
        which: Side,
        /// The missing usage.
        usage: &'static str,
        /// The usages it has.
        has: String,
    },
    /// A caller's buffer is mapped (`mapped_at_creation`, or a finished `map_async`): a
    /// submission using it would fail, so the pad is refused before anything is recorded.
    #[error("{which} buffer is mapped: unmap it (Buffer::unmap) before padding into or from it")]
    BufferMapped {
        /// The input's or the output's.
        which: Side,
    },
    /// Input and output ranges overlap in the same buffer.
    #[error("input bytes {input_start}..{input_end} and output bytes {output_start}..{output_end} overlap in the same buffer")]
    Overlap {
        /// Input range start.
        input_start: u64,
        /// Input range end.
        input_end: u64,
        /// Output range start.
        output_start: u64,
        /// Output range end.
        output_end: u64,
    },
    /// The GPU path cannot run this plan or view on this device (the CPU path can).
    /// `GpuContext::pad` falls back to the CPU for these.
    #[error("the GPU path cannot run this pad ({limit}): {what}")]
    GpuLimit {
        /// Which limit, to branch on without reading the message.
        limit: GpuLimit,
        /// The sizes or axes involved, and the limit's value.
        what: String,
    },
    /// A buffer view the pad cannot read or write (strides, overlap, alignment).
    #[error("{which} view: {reason}")]
    InvalidView {
        /// The input's or the output's.
        which: Side,
        /// What is wrong, naming the axis and the values.
        reason: String,
    },
    /// The device lacks something the GPU path needs.
    #[error("this device cannot run wgpu-pad's shaders: {missing}")]
    DeviceUnsupported {
        /// What is missing, and the value the device reports.
        missing: String,
    },
    /// No GPU adapter or device could be had.
    #[error("no GPU available: {reason}")]
    NoGpu {
        /// Why.
        reason: String,
    },
    /// The device was lost before or during the pad.
    #[error("GPU device lost: {reason}")]
    DeviceLost {
        /// The driver's message.
        reason: String,
    },
    /// The device, or the host for a buffer sized by the request, ran out of memory.
    #[error("out of memory: {reason}")]
    OutOfMemory {
        /// What could not be allocated (the driver's message, for the GPU).
        reason: String,
    },
    /// A .npy file that cannot be read or does not fit the requested type.
    #[error("npy: {reason}")]
    Npy {
        /// What is wrong.
        reason: String,
    },
    /// Any other error reported by wgpu.
    #[error("GPU error: {reason}")]
    Gpu {
        /// wgpu's message.
        reason: String,
    },
}

/// Which of a pad's two buffers or views an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The input's.
    Input,
    /// The output's.
    Output,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Input => "input",
            Side::Output => "output",
        })
    }
}

/// Why the GPU path refuses a plan that the CPU path can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GpuLimit {
    /// The input or output exceeds the device's `max_buffer_size`.
    BufferSize,
    /// More axes remain after merging unpadded ones than the shaders hold.
    Rank,
    /// An axis, row or window whose indices do not fit the shaders' 32-bit arithmetic.
    IndexRange,
    /// A view so scattered that its binding windows would be too many to record.
    Windows,
}

impl std::fmt::Display for GpuLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GpuLimit::BufferSize => "max_buffer_size",
            GpuLimit::Rank => "rank",
            GpuLimit::IndexRange => "index range",
            GpuLimit::Windows => "binding windows",
        })
    }
}

/// `Result` with [`PadError`].
pub type Result<T, E = PadError> = std::result::Result<T, E>;

impl std::str::FromStr for crate::DataType {
    type Err = PadError;
    /// Parses a type name or alias (`DataType::from_name`).
    fn from_str(s: &str) -> std::result::Result<Self, PadError> {
        crate::DataType::from_name(s).ok_or_else(|| PadError::UnknownDataType { name: s.to_string() })
    }
}

impl std::str::FromStr for Mode {
    type Err = PadError;
    /// Parses a mode name, case-sensitively.
    fn from_str(s: &str) -> Result<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| PadError::InvalidMode { mode: s.to_string() })
    }
}
