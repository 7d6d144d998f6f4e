//! The pad's gradient on the GPU as a [`Program`]: the input's gradient is the output's summed
//! over the positions that read it, in the order `crate::adjoint` documents, so its bits are
//! `cpu::pad_backward`'s. Its bulk (the elements of one image on every axis) is a copy, run as
//! the forward pad's crop (`bulk.rs`); the rest, its borders, a gather
//! (`shaders/backward.wgsl`), a lane an element summing its images, in a window of each
//! border box. Where there is no bulk, or a border's window does not fit, the gather on every
//! element: one dispatch where its two views fit a binding; past it, one a window: an index of
//! the outer axes and a run of one axis, padded or not, with the output's gradient it reads.
//! Where no window's reads fit (a wrap's first and last indices read both ends of the axis),
//! the sums in parts along the first touched axis, each part's windows continuing what the
//! parts before stored; a `GpuLimit` where neither fits (an index with more than a block's
//! images on that axis), which `GpuContext::pad_backward` answers on the CPU path. float32,
//! complex64 (its two parts summed alone, as float32 with one more axis), float16 and bfloat16
//! (16-bit elements two to a word) and the float8s but float8e8m0 (four to a word), summed as
//! f32 rounded to the type at every addition.
//!
//! Here the program and complex64's; `bulk.rs` the crop and the border boxes; `whole.rs` the
//! whole plan's checks, uniform and one dispatch (of it or of a window); `windows.rs` the
//! windows and parts past a binding.

mod bulk;
mod whole;
mod windows;

use crate::dtype::DataType;
use crate::error::{GpuLimit, PadError, Result, Side};
use crate::plan::{PadPlan, PadRequest};

use super::checks::{check_rank, limit};
use super::program::{BufferView, DeviceLimits, Program};
use super::variant::KernelVariant;
use whole::Whole;
use windows::{parts, windows, Sides};

impl Program {
    /// The program of `plan`'s gradient: reads `grad_out` (the gradient of the pad's output:
    /// the plan's output shape) and writes `grad_in` (of its input shape), any strides on
    /// either side, on a device with `limits`. Each element of `grad_in` is the sum of
    /// `grad_out` over the output positions that read it, in `crate::adjoint`'s order: the
    /// bits of `cpu::pad_backward`. float32, complex64 (its parts as float32), float16,
    /// bfloat16 and the float8s but float8e8m0. The elements whose every axis has one image
    /// there (the bulk: a pad's interior, all but its borders) are a copy: the forward pad's
    /// crop of `grad_out` (its pipeline and windows); the borders' sums then a window each
    /// of the gradient's own pipeline (the edges, sums on one axis, in its one-level
    /// pipeline; the corners in the plan's: three pipelines at most). Where there is no bulk or a
    /// border's window does not fit a binding, the gradient's pipeline on every element: one
    /// dispatch where both views fit a storage binding; past it, one a window (an index of the outer axes and a run of one axis,
    /// padded or not), each window's
    /// sums whole, where a window's part of each view fits a binding (the output's gradient
    /// it reads: every image of its elements); where none fits, the sums in parts (each the
    /// images at a run of output positions of the first axis the pad touches, in windows,
    /// continuing the sums the parts before stored; the dispatches must run in order); else
    /// `PadError::GpuLimit`. Everything is checked here.
    pub fn backward(
        plan: &PadPlan,
        grad_out: &BufferView,
        grad_in: &BufferView,
        limits: &DeviceLimits,
    ) -> Result<Program> {
        program(plan, grad_out, grad_in, limits, KernelVariant::Default)
    }
}

/// [`Program::backward`] in kernel `variant`: [`KernelVariant::GradientWhole`] runs the
/// gradient's own pipeline on every element, no crop (the others are pads' variants).
pub(crate) fn program(
    plan: &PadPlan,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
    variant: KernelVariant,
) -> Result<Program> {
    if plan.has_interior() {
        return super::interior::backward(plan, grad_out, grad_in, limits);
    }
    if plan.dtype() == DataType::Complex64 {
        return complex_as_parts(plan, grad_out, grad_in, limits, variant);
    }
    let whole = Whole::new(plan, grad_out, grad_in, limits)?;
    if variant != KernelVariant::GradientWhole {
        if let Some(program) = bulk::crop_and_borders(plan, &whole, variant, grad_out, grad_in, limits)? {
            return Ok(program);
        }
    }
    whole_program(plan, &whole, grad_out, grad_in, limits)
}

/// [`program`] with the gradient's own pipeline on every element (no crop): what the tests of
/// its dispatches, windows and parts look at.
#[cfg(test)]
pub(crate) fn whole(
    plan: &PadPlan,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Program> {
    program(plan, grad_out, grad_in, limits, KernelVariant::GradientWhole)
}

/// The gradient's own pipeline on every element of `grad_in`: in windows (one where both
/// views fit a binding), else its sums in parts.
fn whole_program(
    plan: &PadPlan,
    whole: &Whole,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Program> {
    if whole.in_span.is_none() {
        return Ok(whole.program(Vec::new()));
    }
    if let Some(program) = windows(plan, whole, &Sides::every_index(plan.in_shape()), grad_out, grad_in, limits)? {
        return Ok(program);
    }
    match parts(plan, whole, grad_out, grad_in, limits)? {
        Ok(program) => Ok(program),
        Err(why) => {
            let what = format!("the gradient: no window of it fits a binding of {} bytes; {why}", limits.max_binding);
            Err(limit(GpuLimit::Windows, what))
        }
    }
}

/// complex64's gradient: `cpu::pad_backward` sums each of an element's two f32 parts alone,
/// in the one order, so it is the gradient of a float32 pad with one more axis, of the 2
/// parts, that the pad leaves alone; the views' element strides double, the new axis's is 1.
fn complex_as_parts(
    plan: &PadPlan,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
    variant: KernelVariant,
) -> Result<Program> {
    let rank = plan.in_shape().len();
    // Said here: the parts' plan would name its own rank, one more than the caller's.
    check_rank(
        rank + 1,
        format_args!(" in the gradient of a complex64 of {rank} (its parts as float32, one more axis)"),
    )?;
    let shape: Vec<usize> = plan.in_shape().iter().copied().chain([2]).collect();
    let (begins, ends) = (plan.begins().iter().copied().chain([0]), plan.ends().iter().copied().chain([0]));
    let request =
        PadRequest::new(begins.chain(ends).collect()).mode(plan.mode()).max_output_bytes(plan.max_output_bytes());
    let parts = PadPlan::new(DataType::Float32, &shape, &request)?;
    let strides = |v: &BufferView, side: Side| -> Result<Option<Vec<u64>>> {
        let Some(s) = v.strides else { return Ok(None) };
        let doubled: Option<Vec<u64>> = s.iter().map(|&x| x.checked_mul(2)).chain([Some(1)]).collect();
        doubled.map(Some).ok_or_else(|| PadError::InvalidView {
            which: side,
            reason: "a complex64 stride past 2^63 elements (its parts' strides are twice it)".into(),
        })
    };
    let (out_strides, in_strides) = (strides(grad_out, Side::Input)?, strides(grad_in, Side::Output)?);
    let part_out = BufferView { strides: out_strides.as_deref(), ..*grad_out };
    let part_in = BufferView { strides: in_strides.as_deref(), ..*grad_in };
    program(&parts, &part_out, &part_in, limits, variant)
}

#[cfg(test)]
mod tests {
    use super::whole::split_lane_terms;
    use super::*;
    use crate::gpu::params::MAX_RANK;
    use crate::mode::Mode;

    /// complex64's gradient is its parts' as float32: one more axis of 2 the pad leaves
    /// alone, each view's strides doubled, 1 for the parts.
    #[test]
    fn a_complex64_gradient_is_its_parts_as_float32() {
        let limits = DeviceLimits::WEBGPU_DEFAULT;
        let request = |pads: Vec<i64>| PadRequest::new(pads).mode(Mode::Reflect);
        let c = PadPlan::new(DataType::Complex64, &[3, 4], &request(vec![1, 2, 0, 3])).unwrap();
        let f = PadPlan::new(DataType::Float32, &[3, 4, 2], &request(vec![1, 2, 0, 0, 3, 0])).unwrap();
        let (i, o) = c.byte_sizes().unwrap();
        assert_eq!(f.byte_sizes().unwrap(), (i, o));
        let same = |a: Program, b: Program| assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let dense = BufferView::dense;
        same(
            Program::backward(&c, &dense(0, o), &dense(0, i), &limits).unwrap(),
            Program::backward(&f, &dense(0, o), &dense(0, i), &limits).unwrap(),
        );
        // The output's gradient every other element of rows of 16, the input's transposed.
        fn view(strides: &[u64]) -> BufferView<'_> {
            BufferView { offset: 16, strides: Some(strides), end: 2048, buffer_size: 2048 }
        }
        let (c_out, c_in, f_out, f_in) = ([32, 2], [1, 3], [64, 4, 1], [2, 6, 1]);
        same(
            Program::backward(&c, &view(&c_out), &view(&c_in), &limits).unwrap(),
            Program::backward(&f, &view(&f_out), &view(&f_in), &limits).unwrap(),
        );
        let too_far = [u64::MAX / 2 + 1, 1];
        let e = Program::backward(&c, &view(&too_far), &dense(0, i), &limits).unwrap_err();
        assert!(matches!(e, PadError::InvalidView { which: Side::Input, .. }), "{e}");
        // At the rank limit the parts' axis is one too many: a GpuLimit naming the caller's rank.
        let deep = PadPlan::new(DataType::Complex64, &[1; MAX_RANK], &request(vec![0; 2 * MAX_RANK])).unwrap();
        let e = Program::backward(&deep, &dense(0, 8), &dense(0, 8), &limits).unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::Rank, .. }), "{e}");
        assert!(e.to_string().contains("17 axes in the gradient of a complex64 of 16"), "{e}");
        let below = PadPlan::new(DataType::Complex64, &[1; MAX_RANK - 1], &request(vec![0; 2 * MAX_RANK - 2])).unwrap();
        assert!(Program::backward(&below, &dense(0, 8), &dense(0, 8), &limits).is_ok());
    }

    /// The gradient's per-element state holds the plan's axes of several images, rounded up
    /// to a power of two: a pipeline a size, not one sized for 16 axes whatever the plan.
    #[test]
    fn a_gradients_state_is_sized_by_its_axes_of_several_images() {
        let levels = |dtype, shape: &[usize], pads: Vec<i64>, mode| {
            let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads).mode(mode)).unwrap();
            let (i, o) = plan.byte_sizes().unwrap();
            let dense = |n: u64| BufferView::dense(0, n.next_multiple_of(4));
            let p = whole(&plan, &dense(o), &dense(i), &DeviceLimits::WEBGPU_DEFAULT).unwrap();
            let wgsl = p.wgsl(0);
            let size = wgsl.split("const MAX_LEVELS: u32 = ").nth(1).and_then(|r| r.split('u').next());
            let size: u8 = size.unwrap_or_else(|| panic!("no MAX_LEVELS in {wgsl}")).parse().unwrap();
            assert!(p.label(0).ends_with(&format!("levels {size}")), "{}", p.label(0));
            size
        };
        let f32 = DataType::Float32;
        // Reflect on H and W of NCHW: two; the last axis alone: one; D, H and W: four.
        assert_eq!(levels(f32, &[1, 4, 8, 8], vec![0, 0, 2, 2, 0, 0, 2, 2], Mode::Reflect), 2);
        assert_eq!(levels(DataType::Float16, &[2, 16], vec![0, 0, 0, 8], Mode::Reflect), 1);
        assert_eq!(levels(f32, &[2, 5, 6, 7], vec![0, 1, 1, 1, 0, 1, 1, 1], Mode::Edge), 4);
        // A constant pad has one image an index whatever it touches, and so has a crop: a
        // wrap of the last axis beside a crop of the first, one.
        assert_eq!(levels(f32, &[5, 6, 7], vec![1, 1, 1, 1, 1, 1], Mode::Constant), 1);
        assert_eq!(levels(f32, &[5, 6, 7], vec![-1, 0, 1, 0, 0, 0], Mode::Wrap), 1);
        // Five axes wrapped: eight; nine edged: 16 (2^9 terms a corner: more axes of several
        // images are past a lane's terms on the GPU).
        assert_eq!(levels(f32, &[2; 5], vec![1; 10], Mode::Wrap), 8);
        let begins_only: Vec<i64> = [1; 9].into_iter().chain([0; 9]).collect();
        assert_eq!(levels(f32, &[1; 9], begins_only, Mode::Edge), 16);
    }

    /// A gradient's spans are its two views' (what a host checks for overlap in one buffer),
    /// whichever way it runs: the crop and its borders (the crop's own spans are the bulk's),
    /// the pipeline on every element, in parts, complex64's parts.
    #[test]
    fn a_gradients_spans_are_its_views() {
        let limits = DeviceLimits::WEBGPU_DEFAULT;
        type Case = (DataType, &'static [usize], Vec<i64>, Mode, u64);
        let cases: [Case; 5] = [
            (DataType::Float32, &[6, 9], vec![2, 1, 2, 3], Mode::Reflect, 1 << 20),
            (DataType::Float16, &[4, 16], vec![0, 8, 0, 8], Mode::Edge, 1 << 20),
            (DataType::Complex64, &[5, 7], vec![1, 0, 1, 2], Mode::Symmetric, 1 << 20),
            (DataType::Float32, &[5, 7], vec![-1, 2, 1, 2], Mode::Wrap, 1 << 20),
            // Wrapped rows read both ends of the axis: parts, on bindings of 512 bytes.
            (DataType::Float32, &[40, 4], vec![3, 0, 3, 0], Mode::Wrap, 512),
        ];
        for (dtype, shape, pads, mode, max_binding) in cases {
            let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.clone()).mode(mode)).unwrap();
            let (i, o) = plan.byte_sizes().unwrap();
            let limits = DeviceLimits { max_binding, ..limits };
            let (grad_out, grad_in) = (BufferView::dense(256, 256 + o + 64), BufferView::dense(512, 512 + i + 64));
            for p in [
                Program::backward(&plan, &grad_out, &grad_in, &limits).unwrap(),
                whole(&plan, &grad_out, &grad_in, &limits).unwrap(),
            ] {
                let spans = (p.input_span(), p.output_span());
                assert_eq!(spans, (Some((256, 256 + o)), Some((512, 512 + i))), "{dtype:?} {shape:?} {pads:?} {mode}");
            }
        }
    }

    /// Programs of the gradient: one dispatch covering every element of grad_in, the types
    /// refused by name, views that do not fit one binding a GpuLimit.
    #[test]
    fn a_gradient_program_is_one_dispatch() {
        let limits = DeviceLimits::WEBGPU_DEFAULT;
        let plan =
            PadPlan::new(DataType::Float32, &[5, 7], &PadRequest::new(vec![1, 2, 3, 4]).mode(Mode::Wrap)).unwrap();
        let (i, o) = plan.byte_sizes().unwrap();
        let p = whole(&plan, &BufferView::dense(0, o), &BufferView::dense(0, i), &limits).unwrap();
        assert_eq!(p.dispatches().len(), 1);
        let d = &p.dispatches()[0];
        assert_eq!((d.workgroups(), d.input(), d.output()), ([1, 1, 1], Some((0, o)), (0, i)));
        assert!(p.wgsl(0).contains("fn below("), "wrap's list");
        assert!(p.wgsl(0).contains("const SPLIT: bool = false;"), "short sums: a lane an element");
        // A 2-element axis wrapped by 30,000 a side: 30,001 images an element (60,002
        // positions, half of them each's), past 64 blocks of 256: 64 blocks of 469 on a
        // workgroup's lanes; a workgroup takes 64 elements (the long sums one after another).
        let wide =
            PadPlan::new(DataType::Float32, &[2], &PadRequest::new(vec![30000, 30000]).mode(Mode::Wrap)).unwrap();
        let (wi, wo) = wide.byte_sizes().unwrap();
        let p = whole(&wide, &BufferView::dense(0, wo), &BufferView::dense(0, wi), &limits).unwrap();
        assert_eq!(crate::adjoint::most_images(&wide.axes()[0], Mode::Wrap), 30001);
        assert_eq!(crate::adjoint::images(&wide.axes()[0], Mode::Wrap, 0).len(), 30001);
        assert_eq!(crate::adjoint::block_len(30001), 469);
        assert!(p.wgsl(0).contains("const SPLIT: bool = true;"));
        assert_eq!(p.dispatches()[0].workgroups(), [1, 1, 1]);
        // Edge pads of 100 on two axes: a corner sums 101 x 101 terms, past a lane's bound,
        // no axis past a block: the outer axis's 101 terms go to the lanes (303 terms a lane,
        // where splitting the inner one would leave 10,403).
        let corners =
            PadPlan::new(DataType::Float32, &[2, 3], &PadRequest::new(vec![100, 100, 100, 100]).mode(Mode::Edge))
                .unwrap();
        let (ci, co) = corners.byte_sizes().unwrap();
        let p = whole(&corners, &BufferView::dense(0, co), &BufferView::dense(0, ci), &limits).unwrap();
        assert!(p.wgsl(0).contains("const SPLIT: bool = true;"));
        assert_eq!(p.dispatches()[0].workgroups(), [1, 1, 1]);
        let split_axis = p.dispatches()[0].params.gradient().split_axis;
        assert_eq!(split_axis, 0);
        assert_eq!((split_lane_terms(&[101, 101], 0), split_lane_terms(&[101, 101], 1)), (303, 10403));
        assert_eq!(split_lane_terms(&[30001], 0), 469 + 64);
        // Long sums on two axes: past a lane's bound, refused (the CPU path runs it).
        let both =
            PadPlan::new(DataType::Float32, &[2, 2], &PadRequest::new(vec![300, 300, 300, 300]).mode(Mode::Wrap))
                .unwrap();
        let (bi, bo) = both.byte_sizes().unwrap();
        let e = whole(&both, &BufferView::dense(0, bo), &BufferView::dense(0, bi), &limits).unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::IndexRange, .. }), "{e}");
        // 16-bit floats: two to a word, stored by atomics; the element's conversions only.
        let halves =
            PadPlan::new(DataType::Bfloat16, &[4, 7], &PadRequest::new(vec![1, 2, 3, 4]).mode(Mode::Wrap)).unwrap();
        let (hi, ho) = halves.byte_sizes().unwrap();
        let h = whole(&halves, &BufferView::dense(0, ho), &BufferView::dense(0, hi), &limits).unwrap();
        assert_eq!((h.dispatches()[0].output(), h.dispatches()[0].input()), ((0, 56), Some((0, 208))));
        assert!(h.wgsl(0).contains("array<atomic<u32>>") && h.wgsl(0).contains("0x17fffu"), "bfloat16's rounding");
        assert!(
            !h.wgsl(0).contains("0x2fffu") && !p.wgsl(0).contains("array<atomic<u32>>"),
            "float16's, and float32's plain stores"
        );
        let doubles = PadPlan::new(DataType::Float64, &[5], &PadRequest::new(vec![1, 1])).unwrap();
        let e = whole(&doubles, &BufferView::dense(0, 56), &BufferView::dense(0, 40), &limits).unwrap_err();
        assert!(e.to_string().contains("cpu::pad_backward takes float64"), "{e}");
        let ints = PadPlan::new(DataType::Int32, &[5], &PadRequest::new(vec![1, 1])).unwrap();
        let e = whole(&ints, &BufferView::dense(0, 28), &BufferView::dense(0, 20), &limits).unwrap_err();
        assert!(e.to_string().contains("no gradient"), "{e}");
        // Past one binding, windows of the outer axis the pad leaves alone: 6 slabs of 468 bytes
        // of grad_out on bindings of 1 KiB at 256-byte alignment, as few windows as fit: two
        // slabs where their reads start on a boundary (slabs 0-1 and 4-5), else one.
        let batch =
            PadPlan::new(DataType::Float32, &[6, 5, 7], &PadRequest::new(vec![0, 1, 2, 0, 3, 4]).mode(Mode::Wrap))
                .unwrap();
        let (bi, bo) = batch.byte_sizes().unwrap();
        let kib = DeviceLimits { max_binding: 1024, storage_alignment: 256, ..limits };
        let p = whole(&batch, &BufferView::dense(0, bo), &BufferView::dense(0, bi), &kib).unwrap();
        let slabs: Vec<u64> = p.dispatches().iter().map(|d| d.params.gradient().axes[0].in_len as u64).collect();
        assert_eq!(slabs, [2, 1, 1, 2]);
        let mut first = 0;
        for (d, n) in p.dispatches().iter().zip(slabs) {
            let (start, size) = d.output();
            assert!(size <= 1024 && start % 256 == 0 && start <= first * 140 && start + size >= (first + n) * 140);
            let (start, size) = d.input().unwrap();
            assert!(size <= 1024 && start <= first * 468 && start + size >= (first + n) * 468);
            first += n;
        }
        // A wrap of [5, 7] on both axes: its first and last rows are read from both ends of
        // the axis, and no window of them fits 64 bytes.
        let small = DeviceLimits { max_binding: 64, ..limits };
        let e = whole(&plan, &BufferView::dense(0, o), &BufferView::dense(0, i), &small).unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::Windows, .. }), "{e}");
    }
}
