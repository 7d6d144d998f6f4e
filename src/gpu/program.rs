//! The GPU program of one pad: plain data, no wgpu in it. From a plan, two buffer views and
//! a device's limits, [`Program::new`] (made in `layout.rs`) lists the dispatches;
//! `PadKernel` (with the `wgpu` feature) turns them into wgpu calls, and any other WebGPU host (another wgpu major, Dawn, a
//! JavaScript engine) can run them the same way (`examples/program.rs` does, in plain wgpu).

use super::params::{Params, Uniform, WORKGROUP};
use super::shader::PipelineKey;
use super::view::Span;

/// What a program needs to know of a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// The largest storage binding, in bytes: `max_storage_buffer_binding_size` (capped by
    /// `max_buffer_size`).
    pub max_binding: u64,
    /// `max_buffer_size`.
    pub max_buffer: u64,
    /// `min_storage_buffer_offset_alignment`.
    pub storage_alignment: u64,
    /// `max_compute_workgroups_per_dimension`.
    pub max_groups: u32,
}

impl DeviceLimits {
    /// WebGPU's default limits (128 MiB bindings, 256 MiB buffers), which every WebGPU
    /// device offers.
    pub const WEBGPU_DEFAULT: DeviceLimits =
        DeviceLimits { max_binding: 128 << 20, max_buffer: 256 << 20, storage_alignment: 256, max_groups: 65535 };
}

/// Where a tensor lies in a buffer: element 0 at byte `offset`, per-axis element strides
/// (`None`: dense, row-major), nothing read or written at or past byte `end` of a buffer of
/// `buffer_size` bytes.
#[derive(Debug, Clone, Copy)]
pub struct BufferView<'a> {
    /// Byte offset of element 0.
    pub offset: u64,
    /// Element strides per axis, outermost first; `None` for dense.
    pub strides: Option<&'a [u64]>,
    /// The view's bytes end here (the buffer's size, or less).
    pub end: u64,
    /// The buffer's size: bindings round up to whole words and may reach past `end`.
    pub buffer_size: u64,
}

impl BufferView<'_> {
    /// A dense tensor filling a buffer of `buffer_size` bytes from `offset`.
    pub fn dense(offset: u64, buffer_size: u64) -> BufferView<'static> {
        BufferView { offset, strides: None, end: buffer_size, buffer_size }
    }
}

/// The dispatches of one pad (or of its gradient), and the pipelines they run.
///
/// How a host runs it (what `PadKernel`, with the `wgpu` feature, does):
/// 1. A compute pipeline per [`pipeline_count`](Self::pipeline_count): from
///    [`wgsl(i)`](Self::wgsl), entry point `main`, bind group 0: binding 0 a uniform buffer of
///    [`Program::PARAMS_BYTES`], bindings 1 (input) and 2 (output) storage buffers, both
///    declared `read_write` in the WGSL. A pipeline depends only on its
///    [`pipeline_key(i)`](Self::pipeline_key): cache it by that. A pad has one pipeline; a
///    gradient has two where its bulk is a crop (the forward's kernel) and its borders sums.
/// 2. Per [`Dispatch`]: the pipeline it names ([`Dispatch::pipeline`]), its
///    [`params`](Dispatch::params) in a uniform buffer (at an offset
///    aligned to `min_uniform_buffer_offset_alignment`), the input bound at
///    [`input`](Dispatch::input) (offset, size; where `None`, the window reads nothing:
///    any storage buffer range of [`Program::EMPTY_INPUT_BYTES`], the largest minimum
///    binding size of the pipelines), the output at [`output`](Dispatch::output),
///    and `dispatch_workgroups` with [`workgroups`](Dispatch::workgroups).
///
/// Dispatches run in one pass, in their order: a pad's write disjoint outputs, but the
/// parts of a gradient's sums ([`Program::backward`]) add to what the ones before them wrote.
#[derive(Debug, Clone)]
pub struct Program {
    /// The pipelines its dispatches name, each once.
    pub(crate) pipelines: Vec<PipelineKey>,
    pub(crate) dispatches: Vec<Dispatch>,
    /// Byte ranges the views cover (`None` for an empty tensor).
    pub(crate) in_span: Option<Span>,
    pub(crate) out_span: Option<Span>,
}

/// One dispatch of a [`Program`]: its uniform parameters, workgroup counts and the byte
/// ranges it binds.
#[derive(Debug, Clone)]
pub struct Dispatch {
    /// Its pipeline: an index into its program's.
    pub(crate) pipeline: usize,
    pub(crate) params: Uniform,
    pub(crate) workgroups: [u32; 3],
    /// Input binding (offset, size in bytes); `None` when the window reads nothing.
    pub(crate) input: Option<Span>,
    pub(crate) output: Span,
}

impl Program {
    /// Bytes of one dispatch's uniform parameters (binding 0).
    pub const PARAMS_BYTES: u64 = std::mem::size_of::<Params>() as u64;

    /// Bytes to bind as the input of a dispatch that reads nothing ([`Dispatch::input`]
    /// `None`): one element of the widest word a pipeline declares (`vec4<u32>`), which
    /// wgpu requires of any binding of that pipeline.
    pub const EMPTY_INPUT_BYTES: u64 = 16;

    /// Invocations per workgroup, as the WGSL declares (`@workgroup_size`; a measurement
    /// variant, `device-grid-256`, declares 256).
    pub const WORKGROUP_SIZE: u32 = WORKGROUP;

    /// A program of one pipeline, `key`: every dispatch its.
    pub(crate) fn of(
        key: PipelineKey,
        dispatches: Vec<Dispatch>,
        in_span: Option<Span>,
        out_span: Option<Span>,
    ) -> Program {
        debug_assert!(dispatches.iter().all(|d| d.pipeline == 0));
        Program { pipelines: vec![key], dispatches, in_span, out_span }
    }

    /// `other`'s dispatches after this one's, the pipelines they run joined to this one's
    /// (each once); this one's spans.
    pub(crate) fn then(mut self, other: Program) -> Program {
        for d in other.dispatches {
            let pipeline = self.pipeline_index(other.pipelines[d.pipeline]);
            self.dispatches.push(Dispatch { pipeline, ..d });
        }
        self
    }

    /// The index of pipeline `key`, added where it is new.
    fn pipeline_index(&mut self, key: PipelineKey) -> usize {
        self.pipelines.iter().position(|&k| k == key).unwrap_or_else(|| {
            self.pipelines.push(key);
            self.pipelines.len() - 1
        })
    }

    /// The one pipeline of a program that has one (a pad's), for tests.
    #[cfg(test)]
    pub(crate) fn key(&self) -> PipelineKey {
        assert_eq!(self.pipelines.len(), 1, "a program of one pipeline");
        self.pipelines[0]
    }

    /// How many pipelines its dispatches run (indices `0..count`); 1 for a pad, 0 to 3 for a
    /// gradient. A program without dispatches may name one no host need compile.
    pub fn pipeline_count(&self) -> usize {
        self.pipelines.len()
    }

    /// Pipeline `i`'s WGSL (entry point `main`); panics where `i` is not below
    /// [`pipeline_count`](Self::pipeline_count).
    pub fn wgsl(&self, i: usize) -> String {
        self.pipelines[i].wgsl()
    }

    /// A label for pipeline `i`.
    pub fn label(&self, i: usize) -> String {
        self.pipelines[i].label()
    }

    /// What pipeline `i` depends on, to cache compiled pipelines by: two programs' pipelines
    /// with equal keys have the same WGSL.
    pub fn pipeline_key(&self, i: usize) -> PipelineKey {
        self.pipelines[i]
    }

    /// The dispatches, in the order they run (none for an empty output).
    pub fn dispatches(&self) -> &[Dispatch] {
        &self.dispatches
    }

    /// The byte range `[start, end)` of the input buffer the input view covers (`None` for
    /// an empty tensor): a host checks it against [`output_span`](Self::output_span) for
    /// overlap where both are one buffer.
    pub fn input_span(&self) -> Option<(u64, u64)> {
        self.in_span
    }

    /// The byte range `[start, end)` of the output buffer the output view covers.
    pub fn output_span(&self) -> Option<(u64, u64)> {
        self.out_span
    }
}

impl Dispatch {
    /// The program's pipeline it runs: an index below [`Program::pipeline_count`].
    pub fn pipeline(&self) -> usize {
        self.pipeline
    }

    /// The uniform parameters, [`Program::PARAMS_BYTES`] long.
    pub fn params(&self) -> &[u8] {
        self.params.bytes()
    }

    /// Workgroup counts (x, y, z).
    pub fn workgroups(&self) -> [u32; 3] {
        self.workgroups
    }

    /// The input binding, (offset, size) in bytes; `None` where this dispatch reads nothing.
    pub fn input(&self) -> Option<(u64, u64)> {
        self.input
    }

    /// The output binding, (offset, size) in bytes.
    pub fn output(&self) -> (u64, u64) {
        self.output
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataType, Mode, PadPlan, PadRequest};

    /// A storage alignment of 0 (or any non-power of two) or no workgroups is a device the
    /// shaders cannot run on, naming the limit (round six: it had been labelled
    /// max_buffer_size, and 0 groups "one element does not fit a binding").
    #[test]
    fn bad_device_limits_are_named() {
        let plan = PadPlan::new(DataType::Float32, &[4, 4], &PadRequest::new(vec![1, 1, 1, 1])).unwrap();
        let bad = [
            (
                DeviceLimits { storage_alignment: 0, ..DeviceLimits::WEBGPU_DEFAULT },
                "min_storage_buffer_offset_alignment is 0",
            ),
            (
                DeviceLimits { storage_alignment: 6, ..DeviceLimits::WEBGPU_DEFAULT },
                "min_storage_buffer_offset_alignment is 6",
            ),
            (
                DeviceLimits { storage_alignment: 96, ..DeviceLimits::WEBGPU_DEFAULT },
                "min_storage_buffer_offset_alignment is 96",
            ),
            (
                DeviceLimits { max_groups: 0, ..DeviceLimits::WEBGPU_DEFAULT },
                "max_compute_workgroups_per_dimension is 0",
            ),
        ];
        for (limits, says) in bad {
            let e = Program::new(&plan, &BufferView::dense(0, 64), &BufferView::dense(0, 144), &limits).unwrap_err();
            assert!(matches!(e, crate::PadError::DeviceUnsupported { .. }), "{limits:?}: {e}");
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    /// Round six: Program refuses what PadKernel::prepare refuses. Bindings round up to whole
    /// 4-byte words from an aligned offset, and each must lie inside its buffer; a view must
    /// lie inside its buffer; offsets near u64::MAX are errors, not overflows.
    #[test]
    fn views_whose_bindings_overrun_their_buffers_are_refused() {
        use crate::error::Side;
        let edge = |dtype, n: usize| PadPlan::new(dtype, &[n], &PadRequest::new(vec![1, 1]).mode(Mode::Edge)).unwrap();
        let limits = DeviceLimits::WEBGPU_DEFAULT;
        let too_small = |e: crate::PadError, side: Side| {
            assert!(matches!(e, crate::PadError::BufferTooSmall { which, .. } if which == side), "{e}");
        };
        // u8 [3] edge 1,1: a 5-byte output binds (0, 8); a 3-byte input binds (0, 4).
        let u8_3 = edge(DataType::Uint8, 3);
        too_small(
            Program::new(&u8_3, &BufferView::dense(0, 4), &BufferView::dense(0, 5), &limits).unwrap_err(),
            Side::Output,
        );
        too_small(
            Program::new(&u8_3, &BufferView::dense(0, 3), &BufferView::dense(0, 8), &limits).unwrap_err(),
            Side::Input,
        );
        assert!(Program::new(&u8_3, &BufferView::dense(0, 4), &BufferView::dense(0, 8), &limits).is_ok());
        // At byte 256 of a 261-byte buffer: 8 bytes needed from the view's start, 3 past its end.
        let late = BufferView { offset: 256, strides: None, end: 261, buffer_size: 261 };
        let e = Program::new(&u8_3, &BufferView::dense(0, 4), &late, &limits).unwrap_err();
        assert!(matches!(e, crate::PadError::BufferTooSmall { needed: 8, offset: 256, size: 261, .. }), "{e}");
        // f16 [3]: a 6-byte input binds (0, 8).
        let f16_3 = edge(DataType::Float16, 3);
        too_small(
            Program::new(&f16_3, &BufferView::dense(0, 6), &BufferView::dense(0, 12), &limits).unwrap_err(),
            Side::Input,
        );
        // A view ending past its buffer, and a buffer of 0 bytes.
        let past = BufferView { offset: 0, strides: None, end: 100, buffer_size: 64 };
        let e = Program::new(&u8_3, &past, &BufferView::dense(0, 8), &limits).unwrap_err();
        assert!(e.to_string().contains("not inside its buffer of 64 bytes"), "{e}");
        let empty = BufferView { offset: 0, strides: None, end: 0, buffer_size: 0 };
        assert!(Program::new(&u8_3, &BufferView::dense(0, 4), &empty, &limits).is_err());
        // A view starting past its end, and one starting at it (an empty tensor's: laid out).
        let backwards = BufferView { offset: 12, strides: None, end: 8, buffer_size: 64 };
        let e = Program::new(&u8_3, &backwards, &BufferView::dense(0, 8), &limits).unwrap_err();
        assert!(e.to_string().contains("its bytes 12..8 are not inside"), "{e}");
        let nothing = PadPlan::new(DataType::Uint8, &[0], &PadRequest::new(vec![0, 0])).unwrap();
        let at_end = BufferView { offset: 8, strides: None, end: 8, buffer_size: 64 };
        assert!(Program::new(&nothing, &at_end, &at_end, &limits).is_ok());
        // At the end of the device's largest buffer, too.
        let largest = DeviceLimits { max_buffer: 64, ..limits };
        let at_top = BufferView { offset: 64, strides: None, end: 64, buffer_size: 64 };
        assert!(Program::new(&nothing, &at_top, &at_top, &largest).is_ok());
        // An offset near u64::MAX: an error naming the limit, never an overflow.
        let far = BufferView { offset: u64::MAX - 1, strides: None, end: u64::MAX, buffer_size: u64::MAX };
        let one = edge(DataType::Uint8, 1);
        let e = Program::new(&one, &far, &BufferView::dense(0, 4), &limits).unwrap_err();
        assert!(matches!(e, crate::PadError::GpuLimit { .. }) && e.to_string().contains("max_buffer_size"), "{e}");
        let unbounded = DeviceLimits { max_buffer: u64::MAX, ..limits };
        assert!(Program::new(&one, &BufferView::dense(0, 4), &far, &unbounded).is_err());
    }

    /// Round seven: views at the top of the address space, on a device claiming unbounded
    /// buffers and bindings, are refused with a typed error naming the side (or laid out
    /// inside their buffers), never an arithmetic overflow: every type width, both sides,
    /// dense and strided, offsets within a word or two of u64::MAX; pads, interior pads and
    /// (float16, float32) their gradients.
    #[test]
    fn views_at_the_top_of_the_address_space_are_errors_not_overflows() {
        use crate::error::Side;
        let unbounded =
            DeviceLimits { max_binding: u64::MAX, max_buffer: u64::MAX, storage_alignment: 256, max_groups: 65535 };
        let near = BufferView::dense(0, 1 << 20);
        let (mut refused, mut laid) = (0, 0);
        for dtype in [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Int64, DataType::Complex128] {
            let elem = dtype.width().bytes().unwrap() as u64;
            for (shape, pads) in [(&[1usize][..], &[1i64, 1][..]), (&[3, 4], &[1, 1, 1, 1]), (&[5], &[0, 0])] {
                // Constant, edge, and an interior pad (its own kernel, its own gradient).
                let dilated = PadRequest::new(pads.to_vec()).interior(vec![1; shape.len()]);
                let requests = [Mode::Constant, Mode::Edge].map(|m| PadRequest::new(pads.to_vec()).mode(m));
                for request in requests.into_iter().chain([dilated]) {
                    let plan = PadPlan::new(dtype, shape, &request).unwrap();
                    let strides = [plan.out_shape().iter().product::<usize>() as u64 * 2, 2];
                    for back in [1u64, 2, 3, 4, 15, 16, 17, 255, 256, 4096] {
                        let offset = (u64::MAX - back) / elem * elem;
                        let far = BufferView { offset, strides: None, end: u64::MAX, buffer_size: u64::MAX };
                        let far_strided = BufferView { strides: Some(&strides[..shape.len()]), ..far };
                        for far in [far, far_strided].into_iter().take(if shape.len() == 2 { 2 } else { 1 }) {
                            for (side, input, output) in [(Side::Input, far, near), (Side::Output, near, far)] {
                                // The pad, and where it has one the gradient (grad_out the
                                // pad's output view: the read side is still `input`).
                                let backward = matches!(dtype, DataType::Float16 | DataType::Float32);
                                let programs = [
                                    Some(Program::new(&plan, &input, &output, &unbounded)),
                                    backward.then(|| Program::backward(&plan, &input, &output, &unbounded)),
                                ];
                                for program in programs.into_iter().flatten() {
                                    match program {
                                        Ok(p) => {
                                            laid += 1;
                                            for d in p.dispatches() {
                                                let (o, n) = d.output();
                                                assert!(
                                                    o.checked_add(n).is_some(),
                                                    "{dtype} {shape:?}: a binding past u64::MAX"
                                                );
                                            }
                                        }
                                        Err(e) => {
                                            refused += 1;
                                            let named = matches!(e, crate::PadError::InvalidView { which, .. } | crate::PadError::BufferTooSmall { which, .. } if which == side);
                                            assert!(
                                                named || matches!(e, crate::PadError::GpuLimit { .. }),
                                                "{dtype} {shape:?} {side:?}: {e}"
                                            );
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(refused > 50 && laid > 50, "{refused} refused, {laid} laid out");
    }

    /// Round six: storage bindings are whole 4-byte words at offsets a multiple of 4, even
    /// where a device reports an alignment of 1 or 2.
    #[test]
    fn bindings_are_whole_words_at_any_alignment() {
        let plan =
            PadPlan::new(DataType::Uint8, &[40, 3], &PadRequest::new(vec![0, 1, 0, 2]).mode(Mode::Wrap)).unwrap();
        for storage_alignment in [1, 2, 4, 8] {
            let limits = DeviceLimits { storage_alignment, max_binding: 64, ..DeviceLimits::WEBGPU_DEFAULT };
            let p = Program::new(&plan, &BufferView::dense(129, 400), &BufferView::dense(42, 400), &limits).unwrap();
            assert!(p.dispatches().len() > 1);
            for d in p.dispatches() {
                for (offset, size) in [d.input().unwrap(), d.output()] {
                    assert!(offset % 4 == 0 && size % 4 == 0, "alignment {storage_alignment}: ({offset}, {size})");
                }
            }
        }
    }

    /// Round six: past 16 GiB of binding (wgpu's limit is a u64), no window binds more
    /// words than the shaders index in u32.
    #[test]
    fn no_binding_holds_more_words_than_u32_indexes() {
        let request = PadRequest::new(vec![0, 1, 0, 1]).max_output_bytes(1 << 40);
        let plan = PadPlan::new(DataType::Float32, &[8, 1 << 29], &request).unwrap();
        let huge =
            DeviceLimits { max_binding: 1 << 40, max_buffer: 1 << 40, storage_alignment: 256, max_groups: 1 << 24 };
        let dense = BufferView::dense(0, 1 << 40);
        let p = Program::new(&plan, &dense, &dense, &huge).unwrap();
        assert!(p.dispatches().len() > 1);
        for d in p.dispatches() {
            for (_, size) in [d.input().unwrap(), d.output()] {
                assert!(size / 4 <= u32::MAX as u64, "a binding of {} words", size / 4);
            }
        }
    }

    /// Programs are made and checked with no device: windows within the limits and
    /// alignment, inside the buffers, disjoint outputs covering every output byte.
    #[test]
    fn programs_stay_within_limits_and_cover_the_output() {
        let small = DeviceLimits { max_binding: 4096, max_buffer: 1 << 30, storage_alignment: 256, max_groups: 65535 };
        let cases: [(DataType, &[usize], &[i64]); 4] = [
            (DataType::Float32, &[40, 50], &[1, 2, 3, 4]),
            (DataType::Uint8, &[60, 130], &[0, 1, 2, 1]),
            (DataType::Float16, &[17, 19, 21], &[1, 0, 2, 0, 3, 1]),
            (DataType::Int64, &[700], &[5, 7]),
        ];
        for (dtype, shape, pads) in cases {
            for mode in Mode::ALL {
                let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
                let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
                let (in_size, out_size) = (in_bytes.next_multiple_of(4), out_bytes.next_multiple_of(4));
                let (input, output) = (BufferView::dense(0, in_size), BufferView::dense(0, out_size));
                let p = Program::new(&plan, &input, &output, &small).unwrap();
                assert!(p.dispatches().len() > 1, "{dtype} {mode} {shape:?}: small bindings split it");
                let mut written = vec![0u32; out_size as usize];
                for d in p.dispatches() {
                    assert_eq!(d.params().len() as u64, Program::PARAMS_BYTES);
                    for (bind, size) in [(d.input(), in_size), (Some(d.output()), out_size)] {
                        let (offset, len) = bind.unwrap_or((0, 0));
                        assert!(len <= small.max_binding && offset % small.storage_alignment == 0);
                        assert!(offset + len <= size, "{dtype} {mode}: binding past the buffer");
                    }
                    // The bytes this dispatch's window writes: every element position over
                    // its axes' [start, start + len), as the shaders compute it (out_base plus
                    // coordinates times strides, wrapping, in moved words from the binding).
                    let (offset, _) = d.output();
                    let word = u32::from(p.pipelines[0].word_bytes);
                    let q = d.params.pad();
                    let mut positions = vec![q.out_base];
                    for a in &q.axes[..q.rank as usize] {
                        positions = positions
                            .iter()
                            .flat_map(|&b| {
                                (a.start..a.start + a.len).map(move |c| b.wrapping_add(c.wrapping_mul(a.out_stride)))
                            })
                            .collect();
                    }
                    for pos in positions {
                        let at = offset as usize + (pos * word) as usize;
                        written[at..at + word as usize].iter_mut().for_each(|w| *w += 1);
                    }
                }
                assert!(
                    written[..out_bytes as usize].iter().all(|&n| n == 1),
                    "{dtype} {mode}: the windows do not write every output byte exactly once"
                );
            }
        }
    }
}
